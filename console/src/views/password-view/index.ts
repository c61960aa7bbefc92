import { define } from "../../components/define.ts";
import { BerthPasswordView } from "./berth-password-view.ts";

define("berth-password-view", BerthPasswordView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-password-view": BerthPasswordView;
  }
}

export { BerthPasswordView };
