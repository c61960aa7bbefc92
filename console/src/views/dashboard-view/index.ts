import { define } from "../../components/define.ts";
import { BerthDashboardView } from "./berth-dashboard-view.ts";

define("berth-dashboard-view", BerthDashboardView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-dashboard-view": BerthDashboardView;
  }
}

export { BerthDashboardView };
