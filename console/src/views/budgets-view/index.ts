import { define } from "../../components/define.ts";
import { BerthBudgetsView } from "./berth-budgets-view.ts";

define("berth-budgets-view", BerthBudgetsView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-budgets-view": BerthBudgetsView;
  }
}

export { BerthBudgetsView };
