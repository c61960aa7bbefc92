import { define } from "../define.ts";
import { BerthTimeseriesChart } from "./berth-timeseries-chart.ts";

define("berth-timeseries-chart", BerthTimeseriesChart);

declare global {
  interface HTMLElementTagNameMap {
    "berth-timeseries-chart": BerthTimeseriesChart;
  }
}

export { BerthTimeseriesChart };
