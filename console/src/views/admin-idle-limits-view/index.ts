import { define } from "../../components/define.ts";
import { BerthAdminIdleLimitsView } from "./berth-admin-idle-limits-view.ts";

define("berth-admin-idle-limits-view", BerthAdminIdleLimitsView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-admin-idle-limits-view": BerthAdminIdleLimitsView;
  }
}

export { BerthAdminIdleLimitsView };
