import { define } from "../../components/define.ts";
import { BerthSignupRequestsView } from "./berth-signup-requests-view.ts";

define("berth-signup-requests-view", BerthSignupRequestsView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-signup-requests-view": BerthSignupRequestsView;
  }
}

export { BerthSignupRequestsView };
