import { define } from "../define.ts";
import { BerthLogViewer } from "./berth-log-viewer.ts";

define("berth-log-viewer", BerthLogViewer);

declare global {
  interface HTMLElementTagNameMap {
    "berth-log-viewer": BerthLogViewer;
  }
}

export { BerthLogViewer };
