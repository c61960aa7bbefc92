import { define } from "../../components/define.ts";
import { BerthNotFoundView } from "./berth-not-found-view.ts";

define("berth-not-found-view", BerthNotFoundView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-not-found-view": BerthNotFoundView;
  }
}

export { BerthNotFoundView };
