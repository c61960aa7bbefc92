import { define } from "../../components/define.ts";
import { BerthLoginView } from "./berth-login-view.ts";

define("berth-login-view", BerthLoginView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-login-view": BerthLoginView;
  }
}

export { BerthLoginView };
