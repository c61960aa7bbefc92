import { define } from "../../components/define.ts";
import { BerthSessionNewView } from "./berth-session-new-view.ts";

define("berth-session-new-view", BerthSessionNewView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-session-new-view": BerthSessionNewView;
  }
}

export { BerthSessionNewView };
