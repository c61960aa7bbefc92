import { define } from "../../components/define.ts";
import { BerthSettingsView } from "./berth-settings-view.ts";

define("berth-settings-view", BerthSettingsView);

declare global {
  interface HTMLElementTagNameMap {
    "berth-settings-view": BerthSettingsView;
  }
}

export { BerthSettingsView };
