// A cluster's MIG layouts (super_admin): which nodes of a GPU model, by one label, are MIG-partitioned and
// into which instances per card; what each marked node advertises now; mark nodes, or remove a mark. Lives
// on the cluster's page beside node pools: both are selectors over that cluster's nodes.
import { Task } from "@lit/task";
import { html, LitElement, nothing } from "lit";
import type { MigLayout } from "../../api/openapi.gen.ts";
import { createMigLayout, deleteMigLayout, loadMigLayouts } from "../../app/mig-layouts.ts";
import { formatRelative } from "../../data/format.ts";
import { formatMigProfiles, parseMigProfiles } from "../../data/mig.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { MIG_LAYOUTS_TEST_IDS as T } from "../../test-ids/mig-layouts.ts";
import { confirmAction } from "../confirm-dialog/index.ts";
import "../empty-state/index.ts";
import "../error-panel/index.ts";
import { renderTask } from "../task-states.ts";

export class BerthMigLayouts extends LitElement {
  static override styles = [tokens, shared, page];
  static override properties = {
    clusterId: { type: String },
    gpuModels: { attribute: false },
    error: { state: true },
    formError: { state: true },
    notice: { state: true },
  };
  declare clusterId: string;
  /** The GPU models the cluster's nodes report, offered in the form (a text field when none). */
  declare gpuModels: string[];
  declare error: unknown;
  declare formError: string | undefined;
  declare notice: string | undefined;

  #layouts = new Task(this, {
    task: async ([id], { signal }) => loadMigLayouts(id as string, signal),
    args: () => [this.clusterId],
  });

  constructor() {
    super();
    this.clusterId = "";
    this.gpuModels = [];
    this.error = undefined;
    this.formError = undefined;
    this.notice = undefined;
  }

  async #create(e: SubmitEvent) {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    const f = new FormData(form);
    this.error = undefined;
    this.notice = undefined;
    const parsed = parseMigProfiles(String(f.get("profiles") ?? ""));
    if (!parsed.ok) {
      this.formError = parsed.message;
      return;
    }
    this.formError = undefined;
    try {
      const l = await createMigLayout(this.clusterId, {
        selector: String(f.get("selector") ?? "").trim(),
        gpu_model: String(f.get("gpu_model") ?? "").trim(),
        profiles: parsed.profiles,
      });
      this.notice =
        l.nodes.length > 0
          ? `Marked ${l.nodes.length} node(s). Sessions are offered the instances they advertise.`
          : "Marked. No node of the model has the label now; nodes that get it later are offered.";
      form.reset();
      void this.#layouts.run();
    } catch (err) {
      this.error = err;
    }
  }

  async #delete(l: MigLayout) {
    const ok = await confirmAction({
      heading: `Remove the MIG mark ${l.selector}?`,
      body: "Its instances are no longer offered to new sessions. Sessions running on them keep running.",
      confirmLabel: "Remove",
      danger: true,
    });
    if (!ok) return;
    this.error = undefined;
    try {
      await deleteMigLayout(this.clusterId, l.id);
      this.notice = `Mark ${l.selector} removed.`;
      void this.#layouts.run();
    } catch (err) {
      this.error = err;
    }
  }

  #nodes(l: MigLayout) {
    if (l.nodes.length === 0) return html`<span class="muted">none now</span>`;
    return html`<ul class="plain">${l.nodes.map(
      (n) =>
        html`<li><code>${n.name}</code>: ${
          Object.keys(n.advertised).length > 0
            ? formatMigProfiles(n.advertised)
            : html`<span class="badge tone-warn">advertises no MIG instance</span>`
        }</li>`,
    )}</ul>`;
  }

  #row(l: MigLayout) {
    return html`<tr data-testid=${T.row} data-selector=${l.selector}>
      <td>${l.gpu_model}<br /><code>${l.selector}</code></td>
      <td>${formatMigProfiles(l.profiles)}</td>
      <td data-testid=${T.nodes}>${this.#nodes(l)}</td>
      <td title=${l.created_at}>${formatRelative(l.created_at)}</td>
      <td class="actions"><button type="button" class="danger" @click=${() => this.#delete(l)} aria-label="Remove the MIG mark ${l.selector}">Remove</button></td>
    </tr>`;
  }

  #modelField() {
    if (this.gpuModels.length === 0)
      return html`<input id="mig-model" name="gpu_model" required placeholder="NVIDIA-H100-80GB-HBM3" />`;
    return html`<select id="mig-model" name="gpu_model" required>
      ${this.gpuModels.map((m) => html`<option value=${m}>${m}</option>`)}
    </select>`;
  }

  override render() {
    return html`<section class="card" aria-labelledby="mig-h" data-testid=${T.section}>
      <h2 id="mig-h">MIG partitions</h2>
      <p class="hint">Say which nodes' cards NVIDIA's MIG manager has partitioned, and into what: sessions are then offered those instances (each billed by its share of the card) where the nodes advertise them. Berth does not partition cards itself.</p>
      ${this.notice ? html`<p class="success" role="status" data-testid=${T.notice}>${this.notice}</p>` : nothing}
      ${this.error ? html`<berth-error-panel heading="That did not work" .error=${this.error}></berth-error-panel>` : nothing}
      ${renderTask(this.#layouts, {
        pendingLabel: "Loading MIG partitions…",
        isEmpty: (r) => r.data.length === 0,
        empty: () =>
          html`<berth-empty-state heading="No MIG partition marked">Every card of this cluster is offered whole or as slices.</berth-empty-state>`,
        complete: (r) => html`<div class="table-wrap"><table data-testid=${T.table}>
          <caption class="visually-hidden">MIG partitions of this cluster</caption>
          <thead><tr><th scope="col">Nodes</th><th scope="col">Instances per card</th><th scope="col">Marked nodes now</th><th scope="col">Marked</th><th scope="col">Actions</th></tr></thead>
          <tbody>${r.data.map((l) => this.#row(l))}</tbody>
        </table></div>`,
      })}
      <form class="row" @submit=${this.#create} data-testid=${T.createForm}>
        <div class="field"><label for="mig-model">GPU model</label>${this.#modelField()}</div>
        <div class="field"><label for="mig-selector">Nodes with the label</label><input id="mig-selector" name="selector" required placeholder="nvidia.com/mig.config=all-balanced" /></div>
        <div class="field"><label for="mig-profiles">Instances per card</label><input id="mig-profiles" name="profiles" required placeholder="3g.40gb=1, 2g.20gb=1, 1g.10gb=2" aria-describedby=${this.formError ? "mig-form-error" : nothing} /></div>
        <button class="primary" type="submit">Mark the nodes</button>
      </form>
      ${this.formError ? html`<p class="problem" id="mig-form-error" role="alert" data-testid=${T.formError}>${this.formError}</p>` : nothing}
    </section>`;
  }
}
