// Webhooks of the organizations the person administers: add an endpoint (its secret is shown once),
// send a test event, rotate the secret, enable, disable or delete it, and read its deliveries with their
// status and redeliver one. The API decides who may (docs/dev/webhooks.md).
import { Task } from "@lit/task";
import { html, LitElement, nothing } from "lit";
import type { Webhook, WebhookDelivery } from "../../api/openapi.gen.ts";
import { auth } from "../../app/context.ts";
import { confirmAction } from "../../components/confirm-dialog/index.ts";
import "../../components/empty-state/index.ts";
import "../../components/error-panel/index.ts";
import {
  createWebhook,
  deleteWebhook,
  loadWebhookDeliveries,
  loadWebhookEventTypes,
  loadWebhooks,
  pingWebhook,
  redeliverWebhook,
  rotateWebhookSecret,
  setWebhookEnabled,
} from "../../app/webhooks.ts";
import { renderTask } from "../../components/task-states.ts";
import { formatTime } from "../../data/format.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { WEBHOOKS_TEST_IDS as T } from "../../test-ids/webhooks.ts";

const STATE_LABEL: Record<WebhookDelivery["state"], string> = {
  pending: "Pending",
  succeeded: "Delivered",
  failed: "Failed",
};

export class BerthWebhooksView extends LitElement {
  static override styles = [tokens, shared, page];
  static override properties = {
    selected: { state: true },
    secret: { state: true },
    error: { state: true },
    notice: { state: true },
  };
  declare selected: string;
  declare secret: { id: string; value: string } | undefined;
  declare error: unknown;
  declare notice: string | undefined;

  #hooks = new Task(this, {
    task: async (_a, { signal }) => loadWebhooks(signal),
    args: () => [],
  });
  #kinds = new Task(this, {
    task: async (_a, { signal }) => loadWebhookEventTypes(signal),
    args: () => [],
  });
  #deliveries = new Task(this, {
    task: async ([id], { signal }) => (id ? loadWebhookDeliveries(id as string, signal) : undefined),
    args: () => [this.selected],
  });

  constructor() {
    super();
    this.selected = "";
    this.secret = undefined;
    this.error = undefined;
    this.notice = undefined;
  }

  /** Organizations the person administers (super_admins name one by id). */
  get #adminOrgs(): string[] {
    return (auth.me?.memberships ?? [])
      .filter((m) => m.role === "org_admin" && m.project_id === null)
      .map((m) => m.organization_id);
  }

  async #do(
    notice: string,
    fn: () => Promise<unknown>,
    ...reload: Task<readonly unknown[], unknown>[]
  ): Promise<boolean> {
    this.error = undefined;
    this.notice = undefined;
    try {
      await fn();
      this.notice = notice;
      for (const t of reload) void t.run();
      return true;
    } catch (e) {
      this.error = e;
      return false;
    }
  }

  async #create(e: SubmitEvent): Promise<void> {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    const f = new FormData(form);
    const org = String(f.get("organization") ?? "").trim();
    const kinds = f.getAll("event_types").map(String);
    const ok = await this.#do(
      "Endpoint added. Copy its secret now: it is not shown again.",
      async () => {
        const made = await createWebhook({
          url: String(f.get("url") ?? "").trim(),
          description: String(f.get("description") ?? "").trim(),
          event_types: kinds as never,
          ...(org ? { organization_id: org } : {}),
        });
        this.secret = { id: made.id, value: made.secret };
      },
      this.#hooks,
    );
    if (ok) form.reset();
  }

  async #rotate(h: Webhook): Promise<void> {
    if (
      !(await confirmAction({
        heading: "Rotate the secret?",
        body: "A new secret is made and shown once; the old one keeps signing beside it for 24 hours.",
        confirmLabel: "Rotate",
      }))
    )
      return;
    await this.#do(
      "Secret rotated. Copy the new one now: it is not shown again.",
      async () => {
        const r = await rotateWebhookSecret(h.id);
        this.secret = { id: r.id, value: r.secret };
      },
      this.#hooks,
    );
  }

  async #delete(h: Webhook): Promise<void> {
    if (
      await confirmAction({
        heading: `Delete the endpoint ${h.url}?`,
        body: "Its deliveries and their log go with it.",
        confirmLabel: "Delete",
        danger: true,
      })
    ) {
      if (this.selected === h.id) this.selected = "";
      await this.#do("Endpoint deleted.", () => deleteWebhook(h.id), this.#hooks);
    }
  }

  #table(hooks: Webhook[]) {
    return html`<div class="table-wrap"><table data-testid=${T.table}>
      <caption class="visually-hidden">Webhook endpoints</caption>
      <thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">State</th><th scope="col">Actions</th></tr></thead>
      <tbody>${hooks.map(
        (
          h,
        ) => html`<tr data-testid=${T.row} data-webhook-id=${h.id} aria-selected=${h.id === this.selected ? "true" : "false"}>
          <td><code>${h.url}</code>${h.description ? html`<br /><small>${h.description}</small>` : nothing}</td>
          <td>${h.event_types.length === 0 ? "All" : h.event_types.join(", ")}</td>
          <td data-testid=${T.state}>${h.enabled ? "Enabled" : `Disabled${h.disabled_reason ? ` (${h.disabled_reason})` : ""}`}</td>
          <td class="actions">
            <button type="button" @click=${() => (this.selected = h.id)} aria-pressed=${h.id === this.selected ? "true" : "false"} aria-label="Deliveries of ${h.url}">Deliveries</button>
            <button type="button" @click=${() => this.#do("Test event sent.", () => pingWebhook(h.id), this.#deliveries)} aria-label="Test ${h.url}">Test</button>
            <button type="button" @click=${() => this.#rotate(h)} aria-label="Rotate secret of ${h.url}">Rotate secret</button>
            <button type="button" @click=${() => this.#do(h.enabled ? "Endpoint disabled." : "Endpoint enabled.", () => setWebhookEnabled(h.id, !h.enabled), this.#hooks)} aria-label="${h.enabled ? "Disable" : "Enable"} ${h.url}">${h.enabled ? "Disable" : "Enable"}</button>
            <button type="button" class="danger" @click=${() => this.#delete(h)} aria-label="Delete ${h.url}">Delete</button>
          </td></tr>`,
      )}</tbody></table></div>`;
  }

  #deliveriesTable(rows: WebhookDelivery[]) {
    return html`<div class="table-wrap"><table data-testid=${T.deliveries}>
      <caption class="visually-hidden">Deliveries</caption>
      <thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last answer</th><th scope="col">Created</th><th scope="col">Actions</th></tr></thead>
      <tbody>${rows.map(
        (d) => html`<tr data-testid=${T.deliveryRow} data-event-id=${d.event_id}>
          <td><code>${d.event_type}</code><br /><small>${d.event_id}</small></td>
          <td data-testid=${T.deliveryState}>${STATE_LABEL[d.state]}</td>
          <td>${d.attempts}</td>
          <td>${d.last_status_code ?? d.last_error ?? "—"}</td>
          <td>${formatTime(d.created_at)}</td>
          <td class="actions"><button type="button" @click=${() => this.#do("Queued for delivery again.", () => redeliverWebhook(this.selected, d.event_id), this.#deliveries)} aria-label="Redeliver ${d.event_id}">Redeliver</button></td>
        </tr>`,
      )}</tbody></table></div>`;
  }

  override render() {
    const orgs = this.#adminOrgs;
    return html`<h1>Webhooks</h1>
      <p>Berth POSTs your organization's events to these HTTPS endpoints, signed as Standard Webhooks ask.</p>
      ${this.notice ? html`<p class="success" role="status">${this.notice}</p>` : nothing}
      ${this.error ? html`<berth-error-panel heading="That did not work" .error=${this.error}></berth-error-panel>` : nothing}
      ${
        this.secret
          ? html`<section aria-labelledby="secret-h" data-testid=${T.secretPanel}>
            <h2 id="secret-h">Signing secret</h2>
            <p>Shown only now. Store it where your receiver can read it.</p>
            <p><code data-testid=${T.secret}>${this.secret.value}</code></p>
            <button type="button" @click=${() => (this.secret = undefined)}>I have stored it</button>
          </section>`
          : nothing
      }
      <form style="margin:1rem 0" @submit=${this.#create} aria-label="Add an endpoint">
        <div class="row">
          <div style="flex:2;min-width:14rem"><label for="w-url">Endpoint URL (https)</label><input id="w-url" name="url" type="url" required maxlength="2048" placeholder="https://hooks.example.com/berth" /></div>
          <div style="flex:1;min-width:10rem"><label for="w-desc">Description</label><input id="w-desc" name="description" maxlength="500" /></div>
          ${
            orgs.length === 1
              ? nothing
              : html`<div style="flex:1;min-width:10rem"><label for="w-org">Organization</label>${
                  orgs.length > 1
                    ? html`<select id="w-org" name="organization">${orgs.map((o) => html`<option value=${o}>${o}</option>`)}</select>`
                    : html`<input id="w-org" name="organization" required placeholder="org_…" />`
                }</div>`
          }
        </div>
        <fieldset><legend>Events (none ticked: all)</legend>
          ${renderTask(this.#kinds, {
            pendingLabel: "Loading event kinds…",
            complete: (r) =>
              html`${r.data.map(
                (k) =>
                  html`<label style="display:inline-block;margin-right:1rem"><input type="checkbox" name="event_types" value=${k.type} /> <code>${k.type}</code></label>`,
              )}`,
          })}
        </fieldset>
        <button class="primary" type="submit">Add endpoint</button>
      </form>
      ${renderTask(this.#hooks, {
        pendingLabel: "Loading webhooks…",
        isEmpty: (r) => r.data.length === 0,
        empty: () =>
          html`<berth-empty-state heading="No webhook yet">Add an endpoint to hear about sessions and credits as they happen.</berth-empty-state>`,
        complete: (r) => this.#table(r.data),
      })}
      ${
        this.selected
          ? html`<h2>Deliveries</h2>
            <button type="button" @click=${() => void this.#deliveries.run()}>Refresh</button>
            ${renderTask(this.#deliveries, {
              pendingLabel: "Loading deliveries…",
              isEmpty: (r) => !r || r.data.length === 0,
              empty: () =>
                html`<berth-empty-state heading="No delivery yet">Send a test event to see one.</berth-empty-state>`,
              complete: (r) => (r ? this.#deliveriesTable(r.data) : nothing),
            })}`
          : nothing
      }`;
  }
}
