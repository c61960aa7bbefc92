import { define } from "../define.ts";
import { BerthMigLayouts } from "./berth-mig-layouts.ts";

define("berth-mig-layouts", BerthMigLayouts);

declare global {
  interface HTMLElementTagNameMap {
    "berth-mig-layouts": BerthMigLayouts;
  }
}

export { BerthMigLayouts };
