// Volumes: what outlives sessions. Create one (on the default pool unless another is named), grow or
// rename it, share it within the organization (read-only or read-write), see its lock, where its claim is
// bound and what it costs per hour; delete it and undo the delete until its data goes. The API decides
// who may (docs/dev/storage.md). Each volume's snapshots open below its row: take one, restore one into a
// new volume, delete one; their state is what the cluster said (docs/dev/storage.md, "Snapshots").
import { Task } from "@lit/task";
import { html, LitElement, nothing } from "lit";
import type { StorageVolume, VolumeSnapshot } from "../../api/openapi.gen.ts";
import { auth } from "../../app/context.ts";
import { confirmAction } from "../../components/confirm-dialog/index.ts";
import "../../components/empty-state/index.ts";
import "../../components/error-panel/index.ts";
import {
  createVolume,
  createVolumeSnapshot,
  deleteVolume,
  deleteVolumeSnapshot,
  loadDeletedVolumes,
  loadStorageSettings,
  loadVolumeSnapshots,
  loadVolumes,
  restoreVolume,
  restoreVolumeSnapshot,
  setVolumeShares,
  updateVolume,
} from "../../app/storage.ts";
import { renderTask } from "../../components/task-states.ts";
import { formatCredits, formatRelative, formatTime } from "../../data/format.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { VOLUMES_TEST_IDS } from "../../test-ids/volumes.ts";

export class BerthVolumesView extends LitElement {
  static override styles = [tokens, shared, page];
  static override properties = {
    error: { state: true },
    notice: { state: true },
    editing: { state: true },
    snapshotsOf: { state: true },
  };
  declare error: unknown;
  declare notice: string | undefined;
  declare editing: string;
  /** The volume whose snapshots are open ("" for none). */
  declare snapshotsOf: string;

  #snapshots = new Task(this, {
    task: async ([volumeId], { signal }) => (volumeId ? loadVolumeSnapshots(volumeId, signal) : undefined),
    args: () => [this.snapshotsOf] as const,
  });

  #volumes = new Task(this, {
    task: async (_a, { signal }) => loadVolumes(signal),
    args: () => [],
  });
  #deleted = new Task(this, {
    task: async (_a, { signal }) => loadDeletedVolumes(signal),
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
    this.editing = "";
    this.snapshotsOf = "";
  }

  async #do(notice: string, fn: () => Promise<unknown>): Promise<boolean> {
    this.error = undefined;
    this.notice = undefined;
    try {
      await fn();
      this.notice = notice;
      void this.#volumes.run();
      void this.#deleted.run();
      if (this.snapshotsOf) void this.#snapshots.run();
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
    const name = String(f.get("name") ?? "").trim();
    const ok = await this.#do(`Volume ${name} created.`, () => createVolume(name, Number(f.get("size_gb"))));
    if (ok) form.reset();
  }

  async #save(v: StorageVolume, e: SubmitEvent): Promise<void> {
    e.preventDefault();
    const f = new FormData(e.target as HTMLFormElement);
    const name = String(f.get("name") ?? "").trim();
    const size = Number(f.get("size_gb"));
    const body = { ...(name !== v.name ? { name } : {}), ...(size !== v.size_gb ? { size_gb: size } : {}) };
    if (Object.keys(body).length === 0) {
      this.editing = "";
      return;
    }
    if (await this.#do(`Volume ${name} saved.`, () => updateVolume(v.id, body))) this.editing = "";
  }

  async #share(v: StorageVolume, e: SubmitEvent): Promise<void> {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    const f = new FormData(form);
    const next = [
      ...v.shares,
      {
        kind: String(f.get("kind")) as "user" | "project",
        id: String(f.get("id") ?? "").trim(),
        access: String(f.get("access")) as "read_only" | "read_write",
      },
    ];
    if (await this.#do(`Shared ${v.name}.`, () => setVolumeShares(v.id, next))) form.reset();
  }

  async #unshare(v: StorageVolume, id: string): Promise<void> {
    await this.#do(`No longer shared with ${id}.`, () =>
      setVolumeShares(
        v.id,
        v.shares.filter((s) => s.id !== id),
      ),
    );
  }

  async #delete(v: StorageVolume): Promise<void> {
    const grace = this.#settings.value?.delete_grace_hours ?? 24;
    if (
      await confirmAction({
        heading: `Delete the volume ${v.name}?`,
        body: `Its claim goes now; its ${v.size_gb} GB of data are kept ${grace} hours, during which you can undo this.`,
        confirmLabel: "Delete",
        danger: true,
      })
    )
      await this.#do(`Volume ${v.name} deleted. You can undo this below until its data goes.`, () =>
        deleteVolume(v.id),
      );
  }

  async #snapshot(v: StorageVolume, e: SubmitEvent): Promise<void> {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    const name = String(new FormData(form).get("name") ?? "").trim();
    if (
      await this.#do(`Snapshot ${name} of ${v.name} asked for; it is ready once the cluster says so.`, () =>
        createVolumeSnapshot(v.id, name),
      )
    )
      form.reset();
  }

  async #restoreSnapshot(v: StorageVolume, s: VolumeSnapshot, e: SubmitEvent): Promise<void> {
    e.preventDefault();
    const name = String(new FormData(e.target as HTMLFormElement).get("name") ?? "").trim();
    await this.#do(`Snapshot ${s.name} restored into the new volume ${name}.`, () =>
      restoreVolumeSnapshot(v.id, s.id, name),
    );
  }

  async #deleteSnapshot(v: StorageVolume, s: VolumeSnapshot): Promise<void> {
    if (
      await confirmAction({
        heading: `Delete the snapshot ${s.name}?`,
        body: `Its data goes from the cluster; it stops counting against your quota and being billed.`,
        confirmLabel: "Delete",
        danger: true,
      })
    )
      await this.#do(`Snapshot ${s.name} of ${v.name} is being deleted.`, () => deleteVolumeSnapshot(v.id, s.id));
  }

  #snapshotState(s: VolumeSnapshot) {
    const tone = { creating: "tone-info", ready: "tone-ok", failed: "tone-bad", deleting: "tone-muted" }[s.state];
    return html`<span class="badge ${tone}" data-testid=${VOLUMES_TEST_IDS.snapshotState}>${s.state}</span>${
      s.failure ? html`<br /><small>${s.failure}</small>` : nothing
    }`;
  }

  #snapshotsPanel(v: StorageVolume) {
    const manage = !v.shared_with_me;
    return html`<tr data-testid=${VOLUMES_TEST_IDS.snapshotsPanel} data-volume-id=${v.id}><td colspan="8">
      <h3>Snapshots of ${v.name}</h3>
      <p class="muted">A snapshot holds the volume's size against your quota and is billed per GB-hour like a volume until it is deleted. A volume that a running session writes to is refused: pause the session first.</p>
      ${
        manage
          ? html`<form class="row" @submit=${(e: SubmitEvent) => this.#snapshot(v, e)} aria-label="Snapshot ${v.name}">
        <div class="field"><label for="sn-name-${v.id}">Snapshot name</label><input id="sn-name-${v.id}" name="name" required maxlength="128" placeholder="before-upgrade" /></div>
        <button class="primary" type="submit">Take snapshot</button>
      </form>`
          : nothing
      }
      ${renderTask(this.#snapshots, {
        pendingLabel: "Loading snapshots…",
        isEmpty: (r) => !r || r.data.length === 0,
        empty: () =>
          html`<p class="muted" data-testid=${VOLUMES_TEST_IDS.noSnapshots}>No snapshot of this volume yet.</p>`,
        complete: (r) => html`<div class="table-wrap"><table data-testid=${VOLUMES_TEST_IDS.snapshotsTable}>
          <caption class="visually-hidden">Snapshots of ${v.name}</caption>
          <thead><tr><th scope="col">Snapshot</th><th scope="col">State</th><th scope="col">Size</th><th scope="col">Taken</th><th scope="col">Actions</th></tr></thead>
          <tbody>${(r?.data ?? []).map(
            (s) => html`<tr data-testid=${VOLUMES_TEST_IDS.snapshotRow} data-snapshot-id=${s.id}>
              <td><strong data-testid=${VOLUMES_TEST_IDS.snapshotName}>${s.name}</strong><br /><small class="muted"><code>${s.id}</code>${s.cluster ? html` · on ${s.cluster}` : nothing}</small></td>
              <td>${this.#snapshotState(s)}</td>
              <td>${s.size_gb} GB</td>
              <td><time datetime=${s.created_at} title=${formatTime(s.created_at)}>${formatRelative(s.created_at)}</time></td>
              <td class="actions">${
                manage
                  ? html`<form class="row" @submit=${(e: SubmitEvent) => this.#restoreSnapshot(v, s, e)} aria-label="Restore ${s.name}">
                  <div class="field"><label for="rs-${s.id}">New volume</label><input id="rs-${s.id}" name="name" required maxlength="128" .value=${`${v.name}-${s.name}`} ?disabled=${s.state !== "ready"} /></div>
                  <button type="submit" ?disabled=${s.state !== "ready"} aria-label="Restore ${s.name} into a new volume">Restore</button>
                  <button type="button" class="danger" ?disabled=${s.state === "deleting"} @click=${() => this.#deleteSnapshot(v, s)} aria-label="Delete snapshot ${s.name}">Delete</button>
                </form>`
                  : html`<span class="muted">—</span>`
              }</td>
            </tr>`,
          )}</tbody></table></div>`,
      })}
    </td></tr>`;
  }

  #owner(v: StorageVolume) {
    if (v.owner.kind === "project") return html`project <code>${v.owner.id}</code>`;
    return v.owner.id === auth.userId ? "you" : html`<code>${v.owner.id}</code>`;
  }

  #row(v: StorageVolume) {
    const edit = this.editing === v.id;
    const snapshots = this.snapshotsOf === v.id;
    return html`<tr data-testid=${VOLUMES_TEST_IDS.row} data-volume-id=${v.id}>
      <td><strong data-testid=${VOLUMES_TEST_IDS.name}>${v.name}</strong><br /><small class="muted"><code>${v.id}</code> · ${this.#owner(v)}</small>${v.shared_with_me ? html`<br /><span class="badge tone-muted" data-testid=${VOLUMES_TEST_IDS.shared}>Shared with you · ${v.shared_with_me === "read_only" ? "read-only" : "read-write"}</span>` : nothing}</td>
      <td data-testid=${VOLUMES_TEST_IDS.size}>${v.size_gb} GB${v.used_gb !== null ? html`<br /><small>${v.used_gb} GB used</small>` : nothing}</td>
      <td>${v.pool}</td>
      <td data-testid=${VOLUMES_TEST_IDS.bound}>${
        v.bound_cluster
          ? html`<span class="badge tone-info">claim on ${v.bound_cluster}</span><br /><small class="muted">its sessions run there until the claim is released</small>`
          : html`<span class="muted">not bound: can land on any cluster of its pool</span>`
      }</td>
      <td data-testid=${VOLUMES_TEST_IDS.lock}>${v.locked ? html`<span class="badge tone-warn">Locked</span> ${v.lock_reason ?? ""}` : "—"}</td>
      <td>${v.shares.length === 0 ? "—" : v.shares.map((s) => html`<span class="badge tone-muted">${s.kind} ${s.id} · ${s.access === "read_only" ? "read-only" : "read-write"} <button type="button" aria-label="Unshare ${v.name} from ${s.id}" @click=${() => this.#unshare(v, s.id)}>Unshare</button></span> `)}</td>
      <td data-testid=${VOLUMES_TEST_IDS.cost}>${formatCredits(v.hourly_cost)} / h</td>
      <td class="actions">${
        // Shared with the member: theirs to mount, not to change (the API answers 403).
        v.shared_with_me
          ? html`<span class="muted">—</span>`
          : html`<button type="button" @click=${() => (this.editing = edit ? "" : v.id)} aria-expanded=${edit ? "true" : "false"} aria-label="Edit ${v.name}">Edit</button>
        <button type="button" data-testid=${VOLUMES_TEST_IDS.snapshotsToggle} @click=${() => (this.snapshotsOf = snapshots ? "" : v.id)} aria-expanded=${snapshots ? "true" : "false"} aria-label="Snapshots of ${v.name}">Snapshots</button>
        <button type="button" class="danger" ?disabled=${v.locked} @click=${() => this.#delete(v)} aria-label="Delete ${v.name}">Delete</button>`
      }</td>
    </tr>
    ${
      edit
        ? html`<tr><td colspan="8">
        <form class="row" @submit=${(e: SubmitEvent) => this.#save(v, e)} aria-label="Edit ${v.name}">
          <div class="field"><label for="e-name-${v.id}">Name</label><input id="e-name-${v.id}" name="name" required maxlength="128" .value=${v.name} /></div>
          <div class="field"><label for="e-size-${v.id}">Size (GB, grow only)</label><input id="e-size-${v.id}" name="size_gb" type="number" required min=${v.size_gb} step="1" .value=${String(v.size_gb)} ?disabled=${v.locked} /></div>
          <button class="primary" type="submit">Save</button>
        </form>
        <form class="row" @submit=${(e: SubmitEvent) => this.#share(v, e)} aria-label="Share ${v.name}">
          <div class="field"><label for="s-kind-${v.id}">Share with</label><select id="s-kind-${v.id}" name="kind"><option value="user">a user</option><option value="project">a project</option></select></div>
          <div class="field"><label for="s-id-${v.id}">Id</label><input id="s-id-${v.id}" name="id" required placeholder="usr_… or prj_…" /></div>
          <div class="field"><label for="s-access-${v.id}">Access</label><select id="s-access-${v.id}" name="access"><option value="read_only">read-only</option><option value="read_write">read-write</option></select></div>
          <button type="submit">Share</button>
        </form>
      </td></tr>`
        : nothing
    }
    ${snapshots ? this.#snapshotsPanel(v) : nothing}`;
  }

  #table(rows: StorageVolume[]) {
    return html`<div class="table-wrap"><table data-testid=${VOLUMES_TEST_IDS.table}>
      <caption class="visually-hidden">Volumes</caption>
      <thead><tr><th scope="col">Volume</th><th scope="col">Size</th><th scope="col">Pool</th><th scope="col">Where</th><th scope="col">Lock</th><th scope="col">Shared with</th><th scope="col">Cost</th><th scope="col">Actions</th></tr></thead>
      <tbody>${rows.map((v) => this.#row(v))}</tbody></table></div>`;
  }

  #deletedTable(rows: StorageVolume[]) {
    return html`<h2>Deleted, still restorable</h2>
      <div class="table-wrap"><table data-testid=${VOLUMES_TEST_IDS.deletedTable}>
      <caption class="visually-hidden">Deleted volumes</caption>
      <thead><tr><th scope="col">Volume</th><th scope="col">Size</th><th scope="col">Data goes</th><th scope="col">Actions</th></tr></thead>
      <tbody>${rows.map(
        (v) => html`<tr data-testid=${VOLUMES_TEST_IDS.deletedRow} data-volume-id=${v.id}>
          <td><strong>${v.name}</strong><br /><small class="muted"><code>${v.id}</code></small></td>
          <td>${v.size_gb} GB</td>
          <td><time datetime=${v.purge_after ?? ""} title=${formatTime(v.purge_after)}>${formatRelative(v.purge_after)}</time></td>
          <td class="actions"><button type="button" class="primary" @click=${() => this.#do(`Volume ${v.name} restored.`, () => restoreVolume(v.id))} aria-label="Undo delete of ${v.name}">Undo delete</button></td>
        </tr>`,
      )}</tbody></table></div>`;
  }

  override render() {
    const s = this.#settings.value;
    return html`<h1>Volumes</h1>
      <p>Files on a volume outlive sessions: pause, restart or end a session and they are still there. A volume is billed per GB-hour of its size while it exists${s ? html` (<span data-testid=${VOLUMES_TEST_IDS.storageRate}>${formatCredits(s.gb_hour_credit_rate)}</span> credits per GB-hour)` : nothing}, whether a session runs or not.</p>
      ${this.notice ? html`<p class="success" role="status" data-testid=${VOLUMES_TEST_IDS.notice}>${this.notice}</p>` : nothing}
      ${this.error ? html`<berth-error-panel heading="That did not work" .error=${this.error}></berth-error-panel>` : nothing}
      <form class="row" style="margin:1rem 0" @submit=${this.#create} aria-label="Create a volume">
        <div class="field"><label for="v-name">Name</label><input id="v-name" name="name" required maxlength="128" placeholder="datasets" /></div>
        <div class="field"><label for="v-size">Size (GB)</label><input id="v-size" name="size_gb" type="number" required min="1" step="1" value="10" /></div>
        <button class="primary" type="submit">Create volume</button>
      </form>
      ${renderTask(this.#volumes, {
        pendingLabel: "Loading volumes…",
        isEmpty: (r) => r.data.length === 0,
        empty: () =>
          html`<berth-empty-state heading="No volume yet">Create one to keep datasets, notebooks and checkpoints between sessions.</berth-empty-state>`,
        complete: (r) => this.#table(r.data),
      })}
      ${this.#deleted.value && this.#deleted.value.data.length > 0 ? this.#deletedTable(this.#deleted.value.data) : nothing}`;
  }
}
