import { define } from "../../components/define.ts";
import { BerthAllocationsView } from "./berth-allocations-view.ts";

define("berth-allocations-view", BerthAllocationsView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-allocations-view": BerthAllocationsView;
  }
}

export { BerthAllocationsView };
