import { define } from "../define.ts";
import { BerthConfirmDialog, confirmAction } from "./berth-confirm-dialog.ts";

define("berth-confirm-dialog", BerthConfirmDialog);

declare global {
  interface HTMLElementTagNameMap {
    "berth-confirm-dialog": BerthConfirmDialog;
  }
  interface HTMLElementEventMap {
    "berth-confirm": CustomEvent<void>;
    "berth-cancel": CustomEvent<void>;
  }
}

export { BerthConfirmDialog, confirmAction };
