import { define } from "../define.ts";
import { BerthPhaseBadge } from "./berth-phase-badge.ts";

define("berth-phase-badge", BerthPhaseBadge);

declare global {
  interface HTMLElementTagNameMap {
    "berth-phase-badge": BerthPhaseBadge;
  }
}

export { BerthPhaseBadge };
