import { define } from "../../components/define.ts";
import { BerthQuotaInboxView } from "./berth-quota-inbox-view.ts";

define("berth-quota-inbox-view", BerthQuotaInboxView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-quota-inbox-view": BerthQuotaInboxView;
  }
}

export { BerthQuotaInboxView };
