// The tab row of the system settings pages: the settings themselves and the sign-up approval queue.
import { html } from "lit";
import { SETTINGS_TEST_IDS } from "../test-ids/settings.ts";

export type SettingsTab = "settings" | "signups";

export function settingsNav(here: SettingsTab) {
  const tab = (name: SettingsTab, href: string, label: string) =>
    html`<a href=${href} aria-current=${here === name ? "page" : "false"} data-testid=${SETTINGS_TEST_IDS.tab(name)}>${label}</a>`;
  return html`<nav class="subnav" aria-label="System settings">
    ${tab("settings", "/admin/settings", "Settings")} ${tab("signups", "/admin/signups", "Sign-up requests")}
  </nav>`;
}
