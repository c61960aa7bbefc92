import { define } from "../../components/define.ts";
import { BerthCreditAsk } from "./berth-credit-ask.ts";
import { BerthCreditDecide } from "./berth-credit-decide.ts";
import { BerthCreditRequestsView } from "./berth-credit-requests-view.ts";

define("berth-credit-ask", BerthCreditAsk);
define("berth-credit-decide", BerthCreditDecide);
define("berth-credit-requests-view", BerthCreditRequestsView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-credit-ask": BerthCreditAsk;
    "berth-credit-decide": BerthCreditDecide;
    "berth-credit-requests-view": BerthCreditRequestsView;
  }
}

export { BerthCreditRequestsView };
