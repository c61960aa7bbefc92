import { define } from "../define.ts";
import { BerthNotificationBell } from "./berth-notification-bell.ts";

define("berth-notification-bell", BerthNotificationBell);

declare global {
  interface HTMLElementTagNameMap {
    "berth-notification-bell": BerthNotificationBell;
  }
}

export { BerthNotificationBell };
