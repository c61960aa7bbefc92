import { define } from "../define.ts";
import { BerthMonitoringPanel } from "./berth-monitoring-panel.ts";

define("berth-monitoring-panel", BerthMonitoringPanel);

declare global {
  interface HTMLElementTagNameMap {
    "berth-monitoring-panel": BerthMonitoringPanel;
  }
}

export type { PanelRange } from "./berth-monitoring-panel.ts";
export { BerthMonitoringPanel };
