import { define } from "../../components/define.ts";
import { BerthAuditView } from "./berth-audit-view.ts";

define("berth-audit-view", BerthAuditView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-audit-view": BerthAuditView;
  }
}

export { BerthAuditView };
