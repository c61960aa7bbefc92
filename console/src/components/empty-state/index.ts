import { define } from "../define.ts";
import { BerthEmptyState } from "./berth-empty-state.ts";

define("berth-empty-state", BerthEmptyState);

declare global {
  interface HTMLElementTagNameMap {
    "berth-empty-state": BerthEmptyState;
  }
}

export { BerthEmptyState };
