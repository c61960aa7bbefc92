import { define } from "../../components/define.ts";
import { BerthSignupView } from "./berth-signup-view.ts";

define("berth-signup-view", BerthSignupView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-signup-view": BerthSignupView;
  }
}

export { BerthSignupView };
