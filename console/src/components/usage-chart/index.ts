import { define } from "../define.ts";
import { BerthUsageChart } from "./berth-usage-chart.ts";

define("berth-usage-chart", BerthUsageChart);

declare global {
  interface HTMLElementTagNameMap {
    "berth-usage-chart": BerthUsageChart;
  }
}

export { BerthUsageChart };
