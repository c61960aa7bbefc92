import { define } from "../define.ts";
import { BerthBuildLog } from "./berth-build-log.ts";

define("berth-build-log", BerthBuildLog);

declare global {
  interface HTMLElementTagNameMap {
    "berth-build-log": BerthBuildLog;
  }
}

export { BerthBuildLog };
