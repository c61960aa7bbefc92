import { define } from "../define.ts";
import { BerthLiveIndicator } from "./berth-live-indicator.ts";

define("berth-live-indicator", BerthLiveIndicator);

declare global {
  interface HTMLElementTagNameMap {
    "berth-live-indicator": BerthLiveIndicator;
  }
}

export { BerthLiveIndicator };
