import { define } from "../define.ts";
import { BerthErrorPanel } from "./berth-error-panel.ts";

define("berth-error-panel", BerthErrorPanel);

declare global {
  interface HTMLElementTagNameMap {
    "berth-error-panel": BerthErrorPanel;
  }
  interface HTMLElementEventMap {
    /** The user asked to try the failed request again. */
    "berth-retry": CustomEvent<void>;
  }
}

export { BerthErrorPanel };
