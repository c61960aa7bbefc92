// Which kinds of notification the signed-in person receives (GET/PATCH /api/v1/notifications/preferences,
// docs/dev/governance.md). Each switch saves at once; critical kinds (something stopped, money ran out)
// are shown always on with the reason, since the API refuses to turn them off. Only the kinds the API says
// apply to the person (applies_to_me: administrators' kinds to administrators) are listed.
import { Task } from "@lit/task";
import { css, html, LitElement, nothing } from "lit";
import { live } from "lit/directives/live.js";
import type { NotificationPreferences } from "../../api/openapi.gen.ts";
import "../../components/error-panel/index.ts";
import { loadNotificationPreferences, setNotificationPreference } from "../../app/account.ts";
import { renderTask } from "../../components/task-states.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { NOTIFICATION_SETTINGS_TEST_IDS } from "../../test-ids/notification-settings.ts";

type Preference = NotificationPreferences["data"][number];

export class BerthNotificationSettingsView extends LitElement {
  static override styles = [
    tokens,
    shared,
    page,
    css`
      ul { list-style: none; margin: 0; padding: 0; }
      li { display: flex; gap: 1rem; align-items: flex-start; padding: 0.75rem 0; border-top: 1px solid var(--berth-border); }
      li:first-child { border-top: none; }
      .text { flex: 1; }
      .kind { font-weight: 600; }
      code { font-size: 0.85em; }
      input[type="checkbox"] { width: 1.25rem; height: 1.25rem; margin-top: 0.2rem; }
    `,
  ];
  static override properties = { saving: { state: true }, error: { state: true }, saved: { state: true } };
  declare saving: string | undefined;
  declare error: unknown;
  declare saved: string | undefined;

  #prefs = new Task(this, {
    task: async (_a, { signal }) => loadNotificationPreferences(signal),
    args: () => [],
  });

  constructor() {
    super();
    this.saving = undefined;
    this.error = undefined;
    this.saved = undefined;
  }

  async #toggle(p: Preference, enabled: boolean): Promise<void> {
    this.saving = p.kind;
    this.error = undefined;
    this.saved = undefined;
    try {
      await setNotificationPreference(p.kind, enabled);
      this.saved = `${enabled ? "On" : "Off"}: ${p.description}`;
    } catch (error) {
      this.error = error;
    } finally {
      this.saving = undefined;
      // The switch shows what the API holds, also after a refusal.
      await this.#prefs.run();
    }
  }

  #row(p: Preference) {
    const id = `pref-${p.kind.replace(/[^a-z0-9]/gi, "-")}`;
    return html`<li data-testid=${NOTIFICATION_SETTINGS_TEST_IDS.preference} data-kind=${p.kind} ?data-critical=${p.critical}>
      <input type="checkbox" role="switch" id=${id} .checked=${live(p.enabled || p.critical)}
        .disabled=${live(p.critical || this.saving !== undefined)}
        aria-describedby="${id}-why"
        @change=${(e: Event) => void this.#toggle(p, (e.target as HTMLInputElement).checked)}
        data-testid=${NOTIFICATION_SETTINGS_TEST_IDS.preferenceSwitch} />
      <div class="text">
        <label for=${id} class="kind">${p.description}</label>
        <p class="muted" id="${id}-why">
          <code>${p.kind}</code> ·
          ${p.critical ? html`<span data-testid=${NOTIFICATION_SETTINGS_TEST_IDS.alwaysOn}>Always on: it says a session stopped or failed, or something needs you now, so it cannot be turned off.</span>` : p.enabled ? "On" : "Off"}
        </p>
      </div>
    </li>`;
  }

  override render() {
    return html`<div class="page-head"><h1>Notification settings</h1></div>
      <p class="muted">Choose which kinds of notification reach your bell. Turning a kind off stops new ones; the ones you have stay.</p>
      ${this.saved ? html`<p class="success" role="status" data-testid=${NOTIFICATION_SETTINGS_TEST_IDS.preferencesSaved}>Saved. ${this.saved}</p>` : nothing}
      ${this.error ? html`<berth-error-panel heading="Not saved" .error=${this.error}></berth-error-panel>` : nothing}
      <section class="card" aria-labelledby="h-kinds">
        <h2 id="h-kinds">Kinds</h2>
        ${renderTask(this.#prefs, {
          complete: (r) =>
            html`<ul data-testid=${NOTIFICATION_SETTINGS_TEST_IDS.preferences}>${r.data.filter((p) => p.applies_to_me).map((p) => this.#row(p))}</ul>`,
        })}
      </section>`;
  }
}
