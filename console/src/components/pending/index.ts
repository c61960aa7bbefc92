import { define } from "../define.ts";
import { BerthPending } from "./berth-pending.ts";

define("berth-pending", BerthPending);

declare global {
  interface HTMLElementTagNameMap {
    "berth-pending": BerthPending;
  }
}

export { BerthPending };
