// Storage pools (super_admin): each pool's capacity reading with its source (csi: the storage driver's
// report; manual: the stated figure or the fleet default; node_disk: the storage node's system drive, a
// stand-in), how it was read, its age and whether it is stale; add a pool, make one the default, delete an
// empty one; and the fleet-wide storage settings (rate, fleet-default capacity, delete grace period).
import { Task } from "@lit/task";
import { html, LitElement, nothing } from "lit";
import type { StoragePool } from "../../api/openapi.gen.ts";
import { confirmAction } from "../../components/confirm-dialog/index.ts";
import "../../components/empty-state/index.ts";
import "../../components/error-panel/index.ts";
import { loadClusters } from "../../app/clusters.ts";
import {
  createStoragePool,
  deleteStoragePool,
  loadStoragePools,
  loadStorageSettings,
  makeDefaultStoragePool,
  updateStorageSettings,
} from "../../app/storage.ts";
import { renderTask } from "../../components/task-states.ts";
import { formatCredits, formatRelative, formatTime } from "../../data/format.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { POOLS_TEST_IDS } from "../../test-ids/pools.ts";
import { checks } from "../volumes-view/styles.ts";

const SOURCE_LABEL: Record<string, string> = {
  csi: "storage driver (csi)",
  manual: "stated (manual)",
  node_disk: "storage node's drive (node_disk, a stand-in)",
};

export class BerthAdminPoolsView extends LitElement {
  static override styles = [tokens, shared, page, checks];
  static override properties = { error: { state: true }, notice: { state: true }, sharing: { state: true } };
  declare error: unknown;
  declare notice: string | undefined;
  declare sharing: "all" | "selected";

  #pools = new Task(this, {
    task: async (_a, { signal }) => loadStoragePools(signal),
    args: () => [],
  });
  #clusters = new Task(this, {
    task: async (_a, { signal }) => loadClusters(signal),
    args: () => [],
  });
  #settings = new Task(this, {
    task: async (_a, { signal }) => loadStorageSettings(signal),
    args: () => [],
  });

  constructor() {
    super();
    this.error = undefined;
    this.notice = undefined;
    this.sharing = "all";
  }

  async #do(notice: string, fn: () => Promise<unknown>, ...reload: Task<readonly unknown[], unknown>[]) {
    this.error = undefined;
    this.notice = undefined;
    try {
      await fn();
      this.notice = notice;
      for (const t of reload.length ? reload : [this.#pools]) void t.run();
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
    const manual = String(f.get("manual_capacity_gb") ?? "").trim();
    const name = String(f.get("name") ?? "").trim();
    const ok = await this.#do(`Pool ${name} added.`, () =>
      createStoragePool({
        name,
        cluster: String(f.get("cluster") ?? ""),
        storage_class: String(f.get("storage_class") ?? "").trim(),
        sharing: this.sharing,
        ...(this.sharing === "selected" ? { clusters: f.getAll("clusters").map(String) } : {}),
        ...(manual ? { manual_capacity_gb: Number(manual) } : {}),
      }),
    );
    if (ok) form.reset();
  }

  async #settingsSave(e: SubmitEvent): Promise<void> {
    e.preventDefault();
    const f = new FormData(e.target as HTMLFormElement);
    const fleet = String(f.get("fleet_capacity_gb") ?? "").trim();
    await this.#do(
      "Storage settings saved.",
      () =>
        updateStorageSettings({
          gb_hour_credit_rate: String(f.get("gb_hour_credit_rate") ?? "").trim(),
          fleet_capacity_gb: fleet ? Number(fleet) : null,
          delete_grace_hours: Number(f.get("delete_grace_hours")),
        }),
      this.#settings,
      this.#pools,
    );
  }

  #capacity(p: StoragePool) {
    const c = p.capacity;
    if (!c)
      return html`<span class="tone-warn" data-testid=${POOLS_TEST_IDS.capacity}>Unknown: no driver report and no stated capacity (not gated)</span>`;
    return html`<span data-testid=${POOLS_TEST_IDS.capacity}>${c.available_gb} of ${c.total_gb} GB free</span><br />
      <small>${c.provisioned_gb} GB in volumes</small><br />
      <span class="badge ${c.source === "csi" ? "tone-ok" : c.source === "manual" ? "tone-info" : "tone-warn"}" data-testid=${POOLS_TEST_IDS.source}>${SOURCE_LABEL[c.source] ?? c.source}</span>
      ${c.via ? html`<small class="muted" data-testid=${POOLS_TEST_IDS.via}>via ${c.via}</small>` : nothing}
      ${c.stale ? html`<span class="badge tone-warn" data-testid=${POOLS_TEST_IDS.stale}>Stale: its cluster has not reported for a while</span>` : nothing}`;
  }

  #table(rows: StoragePool[]) {
    return html`<div class="table-wrap"><table data-testid=${POOLS_TEST_IDS.table}>
      <caption class="visually-hidden">Storage pools</caption>
      <thead><tr><th scope="col">Pool</th><th scope="col">Storage server</th><th scope="col">Shared with</th><th scope="col">Capacity</th><th scope="col">Read</th><th scope="col">Volumes</th><th scope="col">Actions</th></tr></thead>
      <tbody>${rows.map(
        (p) => html`<tr data-testid=${POOLS_TEST_IDS.row} data-pool=${p.name}>
          <td><strong>${p.display_name ?? p.name}</strong>${p.default ? html` <span class="badge tone-info">Default</span>` : nothing}<br /><small class="muted"><code>${p.name}</code> · class <code>${p.storage_class}</code></small></td>
          <td><code>${p.cluster}</code></td>
          <td>${p.sharing === "all" ? "All clusters" : p.clusters.map((c) => html`<code>${c}</code> `)}</td>
          <td>${this.#capacity(p)}</td>
          <td data-testid=${POOLS_TEST_IDS.age}>${p.capacity?.observed_at ? html`<time datetime=${p.capacity.observed_at} title=${formatTime(p.capacity.observed_at)}>${formatRelative(p.capacity.observed_at)}</time>` : html`<span class="muted">stated</span>`}</td>
          <td>${p.volumes}</td>
          <td class="actions">
            ${p.default ? nothing : html`<button type="button" @click=${() => this.#do(`${p.name} is the default pool.`, () => makeDefaultStoragePool(p.name))} aria-label="Make default: ${p.name}">Make default</button>`}
            <button type="button" class="danger" @click=${async () => {
              if (
                await confirmAction({
                  heading: `Delete the pool ${p.name}?`,
                  body: "Only a pool without volumes can go; its data is not touched.",
                  confirmLabel: "Delete",
                  danger: true,
                })
              )
                await this.#do(`Pool ${p.name} deleted.`, () => deleteStoragePool(p.name));
            }} aria-label="Delete ${p.name}">Delete</button>
          </td>
        </tr>`,
      )}</tbody></table></div>`;
  }

  override render() {
    const clusters = this.#clusters.value?.data ?? [];
    const s = this.#settings.value;
    return html`<h1>Storage pools</h1>
      <p>Each pool is one storage server every permitted cluster mounts through one storage class. Pools are never added together: a volume must fit one.</p>
      ${this.notice ? html`<p class="success" role="status">${this.notice}</p>` : nothing}
      ${this.error ? html`<berth-error-panel heading="That did not work" .error=${this.error}></berth-error-panel>` : nothing}
      ${renderTask(this.#pools, {
        pendingLabel: "Loading pools…",
        isEmpty: (r) => r.data.length === 0,
        empty: () =>
          html`<berth-empty-state heading="No pool yet">Add one so people can create volumes that outlive their sessions.</berth-empty-state>`,
        complete: (r) => this.#table(r.data),
      })}
      <h2>Add a pool</h2>
      <form @submit=${this.#create} aria-label="Add a pool">
        <div class="row">
          <div class="field"><label for="p-name">Name</label><input id="p-name" name="name" required pattern="[a-z0-9]([-a-z0-9]*[a-z0-9])?" maxlength="63" placeholder="shared" /></div>
          <div class="field"><label for="p-cluster">Storage server's cluster</label><select id="p-cluster" name="cluster" required>${clusters.map((c) => html`<option value=${c.id}>${c.name} (${c.id})</option>`)}</select></div>
          <div class="field"><label for="p-class">Storage class</label><input id="p-class" name="storage_class" required maxlength="63" placeholder="berth-shared" /></div>
          <div class="field"><label for="p-manual">Stated capacity (GB, optional)</label><input id="p-manual" name="manual_capacity_gb" type="number" min="0" step="1" /></div>
        </div>
        <fieldset><legend>Shared with</legend>
          <label class="check"><input type="radio" name="sharing" value="all" .checked=${this.sharing === "all"} @change=${() => (this.sharing = "all")} /> all clusters</label>
          <label class="check"><input type="radio" name="sharing" value="selected" .checked=${this.sharing === "selected"} @change=${() => (this.sharing = "selected")} /> selected clusters</label>
          ${this.sharing === "selected" ? html`<div>${clusters.map((c) => html`<label class="check"><input type="checkbox" name="clusters" value=${c.id} /> ${c.name}</label>`)}</div>` : nothing}
        </fieldset>
        <button class="primary" type="submit">Add pool</button>
      </form>
      <h2>Storage settings</h2>
      ${
        s
          ? html`<form class="row" @submit=${this.#settingsSave} aria-label="Storage settings">
          <div class="field"><label for="s-rate">Rate (minor units per GB-hour)</label><input id="s-rate" name="gb_hour_credit_rate" required pattern="[0-9]+" .value=${s.gb_hour_credit_rate} aria-describedby="s-rate-hint" /><p class="hint" id="s-rate-hint">= ${formatCredits(s.gb_hour_credit_rate)} credits per GB-hour</p></div>
          <div class="field"><label for="s-fleet">Fleet-default capacity (GB)</label><input id="s-fleet" name="fleet_capacity_gb" type="number" min="1" step="1" .value=${s.fleet_capacity_gb === null ? "" : String(s.fleet_capacity_gb)} aria-describedby="s-fleet-hint" /><p class="hint" id="s-fleet-hint">For pools that state none and whose driver reports none.</p></div>
          <div class="field"><label for="s-grace">Deleted volumes kept (hours)</label><input id="s-grace" name="delete_grace_hours" type="number" min="0" max="720" step="1" .value=${String(s.delete_grace_hours)} /></div>
          <button type="submit">Save settings</button>
        </form>`
          : nothing
      }`;
  }
}
