import { define } from "../../components/define.ts";
import { BerthCreditRequestsView } from "./berth-credit-requests-view.ts";

define("berth-credit-requests-view", BerthCreditRequestsView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-credit-requests-view": BerthCreditRequestsView;
  }
}

export { BerthCreditRequestsView };
