import { define } from "../../components/define.ts";
import { BerthNotificationSettingsView } from "./berth-notification-settings-view.ts";

define("berth-notification-settings-view", BerthNotificationSettingsView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-notification-settings-view": BerthNotificationSettingsView;
  }
}

export { BerthNotificationSettingsView };
