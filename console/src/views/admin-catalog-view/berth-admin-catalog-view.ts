// The catalog's administration: offerings (grouped by tier), resource presets, images, resource
// policies, and the clusters image builds may run on. Every administrator reads; only a super_admin
// creates and changes (the API refuses others with 403, and the page says so instead of offering forms).
// One form per kind, described as data (data/catalog-admin.ts); the API's refusals show with the fields.
import { Task } from "@lit/task";
import { css, html, LitElement, nothing, type TemplateResult } from "lit";
import type { Cluster, Image, Offering, ResourcePolicy, ResourcePreset } from "../../api/openapi.gen.ts";
import { auth, router } from "../../app/context.ts";
import "../../components/empty-state/index.ts";
import "../../components/error-panel/index.ts";
import {
  type CatalogKind,
  loadBuildClusters,
  loadOfferings,
  loadResourcePolicies,
  loadResourcePresets,
  saveCatalogEntry,
  setBuildCluster,
  setOfferingEnabled,
} from "../../app/catalog.ts";
import { loadClusters } from "../../app/clusters.ts";
import { loadImages } from "../../app/images.ts";
import { renderTask } from "../../components/task-states.ts";
import {
  byTier,
  CATALOG_TABS,
  type CatalogTab,
  catalogTab,
  IMAGE_FORM,
  type KindForm,
  limitsLine,
  OFFERING_FORM,
  POLICY_FORM,
  PRESET_FORM,
  rateText,
  type Values,
} from "../../data/catalog-admin.ts";
import { credits } from "../../styles/credits.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { CATALOG_TEST_IDS } from "../../test-ids/catalog.ts";
import { SHELL_TEST_IDS } from "../../test-ids/shell.ts";

type Editing = { tab: CatalogTab; name: string | null; values: Values };

const FORMS: Partial<Record<CatalogTab, KindForm>> = {
  offerings: OFFERING_FORM,
  presets: PRESET_FORM,
  images: IMAGE_FORM,
  policies: POLICY_FORM,
};

/** A cluster with its build mark (undefined: the caller may not read marks). */
type BuildRow = Cluster & { builds: boolean | undefined };

export class BerthAdminCatalogView extends LitElement {
  static override styles = [
    tokens,
    shared,
    page,
    credits,
    // One tier's table under another: the same columns line up.
    css`
      table.tier {
        table-layout: fixed;
        width: 100%;
      }
    `,
  ];
  static override properties = {
    query: { attribute: false },
    editing: { state: true },
    problem: { state: true },
    busy: { state: true },
    saveError: { state: true },
    notice: { state: true },
  };
  declare query: URLSearchParams;
  declare editing: Editing | undefined;
  declare problem: { field: string; text: string } | undefined;
  declare busy: boolean;
  declare saveError: unknown;
  declare notice: string | undefined;

  #data = new Task(this, {
    task: async ([tab], { signal }) => {
      switch (tab as CatalogTab) {
        case "offerings":
          return { tab: "offerings" as const, rows: (await loadOfferings(signal)).data };
        case "presets":
          return { tab: "presets" as const, rows: (await loadResourcePresets(signal)).data };
        case "images":
          return { tab: "images" as const, rows: (await loadImages(signal)).data };
        case "policies":
          return { tab: "policies" as const, rows: (await loadResourcePolicies(signal)).data };
        default: {
          // The mark is a super_admin's to read and set (GET /image-builds/clusters); others see the clusters.
          const [clusters, marks] = await Promise.all([
            loadClusters(signal),
            auth.isSuperAdmin ? loadBuildClusters(signal) : Promise.resolve(undefined),
          ]);
          const marked = marks ? new Set(marks.data.map((m) => m.cluster_id)) : undefined;
          const rows = clusters.data.map((c) => ({ ...c, builds: marked?.has(c.id) }));
          return { tab: "build-clusters" as const, rows };
        }
      }
    },
    args: () => [this.tab],
  });

  constructor() {
    super();
    this.query = new URLSearchParams();
    this.editing = undefined;
    this.problem = undefined;
    this.busy = false;
    this.saveError = undefined;
    this.notice = undefined;
  }

  get tab(): CatalogTab {
    return catalogTab(this.query);
  }

  #edit(name: string | null, o: Record<string, unknown> = {}): void {
    const form = FORMS[this.tab];
    if (!form) return;
    this.editing = { tab: this.tab, name, values: form.values(o) };
    this.problem = undefined;
    this.saveError = undefined;
    this.notice = undefined;
    void this.updateComplete.then(() => this.renderRoot.querySelector<HTMLElement>("#edit-h")?.focus());
  }

  async #save(e: SubmitEvent): Promise<void> {
    e.preventDefault();
    const ed = this.editing;
    const form = ed && FORMS[ed.tab];
    if (!ed || !form) return;
    const creating = ed.name === null;
    const built = form.build(ed.values, creating);
    if (!built.ok) {
      this.problem = { field: built.field, text: built.problem };
      this.renderRoot.querySelector<HTMLElement>(`#f-${built.field}`)?.focus();
      return;
    }
    this.busy = true;
    this.saveError = undefined;
    try {
      await saveCatalogEntry(ed.tab as CatalogKind, ed.name, built.body as never);
      const name = creating ? String(built.body.name) : ed.name;
      this.notice = `${creating ? "Created" : "Saved"} the ${form.noun} ${name}.`;
      this.editing = undefined;
      void this.#data.run();
    } catch (err) {
      this.saveError = err;
    } finally {
      this.busy = false;
    }
  }

  async #toggle(o: Offering): Promise<void> {
    this.notice = undefined;
    this.saveError = undefined;
    try {
      await setOfferingEnabled(o.name, !o.enabled);
      this.notice = `${o.enabled ? "Disabled" : "Enabled"} the offering ${o.name}.`;
      void this.#data.run();
    } catch (err) {
      this.saveError = err;
    }
  }

  #editor(ed: Editing): TemplateResult {
    const form = FORMS[ed.tab] as KindForm;
    const creating = ed.name === null;
    const set = (key: string, value: string) => {
      this.editing = { ...ed, values: { ...ed.values, [key]: value } };
      this.problem = undefined;
    };
    return html`<section class="card" aria-labelledby="edit-h" data-testid=${CATALOG_TEST_IDS.editor}>
      <h2 id="edit-h" tabindex="-1">${creating ? `New ${form.noun}` : `Change ${form.noun} ${ed.name}`}</h2>
      <form novalidate @submit=${(e: SubmitEvent) => this.#save(e)}>
        <div class="form-grid">
          ${form.fields
            .filter((f) => creating || !f.createOnly)
            .map((f) => {
              const id = `f-${f.key}`;
              const bad = this.problem?.field === f.key;
              const described = `${f.hint ? `${id}-hint` : ""}${bad ? ` ${id}-problem` : ""}`.trim();
              const v = ed.values[f.key] ?? "";
              const input =
                f.kind === "select"
                  ? html`<select id=${id} data-testid=${CATALOG_TEST_IDS.field(f.key)} @change=${(e: Event) => set(f.key, (e.target as HTMLSelectElement).value)}>
                      ${(f.options ?? []).map((o) => html`<option value=${o} ?selected=${o === v}>${o}</option>`)}</select>`
                  : f.kind === "bool"
                    ? html`<select id=${id} data-testid=${CATALOG_TEST_IDS.field(f.key)} @change=${(e: Event) => set(f.key, (e.target as HTMLSelectElement).value)}>
                        <option value="true" ?selected=${v !== "false"}>Yes</option><option value="false" ?selected=${v === "false"}>No</option></select>`
                    : html`<input id=${id} data-testid=${CATALOG_TEST_IDS.field(f.key)} autocomplete="off" inputmode=${f.kind === "int" ? "numeric" : f.kind === "credits" ? "decimal" : "text"}
                        aria-invalid=${bad ? "true" : "false"} aria-describedby=${described || nothing} .value=${v}
                        @input=${(e: Event) => set(f.key, (e.target as HTMLInputElement).value)} />`;
              return html`<div class="field"><label for=${id}>${f.label}${f.required && creating ? " *" : ""}</label>${input}
                ${f.hint ? html`<p class="hint" id="${id}-hint">${f.hint}</p>` : nothing}
                ${bad ? html`<p class="problem" id="${id}-problem" data-testid=${CATALOG_TEST_IDS.fieldProblem}>${this.problem?.text}</p>` : nothing}</div>`;
            })}
        </div>
        ${this.saveError ? html`<berth-error-panel heading="Not saved" .error=${this.saveError}></berth-error-panel>` : nothing}
        <div class="actions">
          <button class="primary" type="submit" ?disabled=${this.busy} data-testid=${CATALOG_TEST_IDS.save}>${creating ? "Create" : "Save"}</button>
          <button type="button" @click=${() => (this.editing = undefined)}>Cancel</button>
        </div>
      </form>
    </section>`;
  }

  #editButton(name: string, o: Record<string, unknown>) {
    return auth.isSuperAdmin && FORMS[this.tab]
      ? html`<button type="button" @click=${() => this.#edit(name, o)} data-testid=${CATALOG_TEST_IDS.edit(name)} aria-label="Change ${name}">Change</button>`
      : nothing;
  }

  #offerings(rows: Offering[]) {
    return byTier(rows).map(
      ([tier, os]) => html`<h3 data-testid=${CATALOG_TEST_IDS.tier(tier)}>Tier: ${tier}</h3>
        <div class="table-wrap" tabindex="0" role="region" aria-label="Offerings of tier ${tier}"><table class="tier">
          <caption class="visually-hidden">Offerings of tier ${tier}</caption>
          <thead><tr><th scope="col">Name</th><th scope="col">GPU model</th><th scope="col" class="num">GPUs or slice</th>
            <th scope="col" class="num">Rate</th><th scope="col">Members see it</th><th scope="col">Actions</th></tr></thead>
          <tbody>${os.map(
            (o) => html`<tr data-testid=${CATALOG_TEST_IDS.offeringRow} data-name=${o.name}>
              <th scope="row">${o.display_name}<br /><span class="muted mono">${o.name}</span></th>
              <td class="mono">${o.gpu_model}</td><td class="num" data-testid=${CATALOG_TEST_IDS.offeringShare}>${
                o.fraction && o.fraction !== "1"
                  ? `${o.fraction} card${o.gpu_memory_mib ? ` · ${Math.floor(o.gpu_memory_mib / 1024)} GiB` : ""}`
                  : o.gpu_count
              }</td>
              <td class="num">${rateText(o.hourly_credit_rate)}</td>
              <td><span class="badge ${o.enabled ? "tone-ok" : "tone-muted"}">${o.enabled ? "Enabled" : "Disabled"}</span></td>
              <td class="actions">${this.#editButton(o.name, o)}${
                auth.isSuperAdmin
                  ? html`<button type="button" @click=${() => this.#toggle(o)} data-testid=${CATALOG_TEST_IDS.offeringToggle(o.name)}>${o.enabled ? "Disable" : "Enable"}</button>`
                  : nothing
              }</td></tr>`,
          )}</tbody></table></div>`,
    );
  }

  #simple<T extends { name: string }>(label: string, rows: T[], cols: [string, (r: T) => unknown][]) {
    return html`<div class="table-wrap" tabindex="0" role="region" aria-label=${label}><table data-testid=${CATALOG_TEST_IDS.table}>
      <caption class="visually-hidden">${label}</caption>
      <thead><tr><th scope="col">Name</th>${cols.map(([h]) => html`<th scope="col">${h}</th>`)}<th scope="col">Actions</th></tr></thead>
      <tbody>${rows.map(
        (
          r,
        ) => html`<tr data-testid=${CATALOG_TEST_IDS.row} data-name=${r.name}><th scope="row" class="mono">${r.name}</th>
          ${cols.map(([, f]) => html`<td>${f(r)}</td>`)}
          <td>${this.#editButton(r.name, r as unknown as Record<string, unknown>)}</td></tr>`,
      )}</tbody></table></div>`;
  }

  #scope(p: ResourcePolicy): string {
    const s = p.scope;
    return s.kind === "global"
      ? "everyone"
      : s.kind === "user"
        ? `user ${s.id} in ${s.organization}`
        : `${s.kind} ${s.id}`;
  }

  async #mark(c: BuildRow): Promise<void> {
    this.notice = undefined;
    this.saveError = undefined;
    try {
      await setBuildCluster(c.id, !c.builds);
      this.notice = c.builds ? `Builds no longer go to ${c.name}.` : `Builds may run on ${c.name}.`;
      void this.#data.run();
    } catch (err) {
      this.saveError = err;
    }
  }

  #buildClusters(rows: BuildRow[]) {
    const live = rows.filter((c) => c.status !== "deregistered");
    return html`${
      auth.isSuperAdmin
        ? html`<p class="muted">Image builds run as Jobs on the clusters marked here, on nodes without GPUs (docs on the Images page).</p>`
        : html`<p class="muted" data-testid=${CATALOG_TEST_IDS.buildsNotAvailable}>Only a platform administrator (super_admin) sees and sets which clusters run image builds.</p>`
    }
      <div class="table-wrap" tabindex="0" role="region" aria-label="Clusters for image builds"><table data-testid=${CATALOG_TEST_IDS.table}>
      <caption class="visually-hidden">Clusters for image builds</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Nodes / GPUs</th><th scope="col">Builds</th>${auth.isSuperAdmin ? html`<th scope="col">Actions</th>` : nothing}</tr></thead>
      <tbody>${live.map(
        (
          c,
        ) => html`<tr data-testid=${CATALOG_TEST_IDS.row} data-name=${c.name}><th scope="row" class="mono">${c.name}</th>
          <td>${c.status}</td><td>${c.inventory.nodes} / ${c.inventory.gpus}</td>
          <td data-testid=${CATALOG_TEST_IDS.buildMark}>${c.builds === undefined ? html`<span class="muted">—</span>` : c.builds ? "Marked" : "Not marked"}</td>
          ${
            auth.isSuperAdmin
              ? html`<td><button type="button" data-testid=${CATALOG_TEST_IDS.buildMarkToggle} @click=${() => this.#mark(c)}
                  aria-label=${`${c.builds ? "Unmark" : "Mark for builds"} ${c.name}`}>${c.builds ? "Unmark" : "Mark for builds"}</button></td>`
              : nothing
          }</tr>`,
      )}</tbody></table></div>`;
  }

  #body(d: { tab: CatalogTab; rows: unknown[] }) {
    switch (d.tab) {
      case "offerings":
        return this.#offerings(d.rows as Offering[]);
      case "presets":
        return this.#simple("Resource presets", d.rows as ResourcePreset[], [
          ["Display name", (p) => p.display_name],
          ["Kind", (p) => p.kind],
          ["CPU · memory · GPUs", (p) => `${p.cpu} · ${p.memory} · ${p.gpu_count}`],
        ]);
      case "images":
        return this.#simple("Images", d.rows as Image[], [
          ["Display name", (i) => i.display_name],
          ["Reference", (i) => html`<span class="mono">${i.image}</span>`],
          ["Kind", (i) => i.kind],
          ["Visibility", (i) => (i.visibility === "private" ? `private (${i.owner ?? "?"})` : "public")],
        ]);
      case "policies":
        return this.#simple("Resource policies", d.rows as ResourcePolicy[], [
          ["Applies to", (p) => this.#scope(p)],
          ["Limits", (p) => limitsLine(p.limits)],
          ["Offerings", (p) => p.allowed_offerings?.join(", ") ?? "all"],
        ]);
      default:
        return this.#buildClusters(d.rows as BuildRow[]);
    }
  }

  override render() {
    const tab = this.tab;
    const form = FORMS[tab];
    return html`<div class="page-head"><h1>Catalog</h1>${
      form && auth.isSuperAdmin && !this.editing
        ? html`<button class="primary" type="button" @click=${() => this.#edit(null)} data-testid=${CATALOG_TEST_IDS.new}>New ${form.noun}</button>`
        : nothing
    }</div>
      <nav class="subnav" aria-label="Catalog">${CATALOG_TABS.map(
        (
          t,
        ) => html`<a href="/admin/catalog?tab=${t.tab}" aria-current=${t.tab === tab ? "page" : "false"} data-testid=${CATALOG_TEST_IDS.tab(t.tab)}
          @click=${(e: Event) => {
            e.preventDefault();
            this.editing = undefined;
            this.notice = undefined;
            this.saveError = undefined;
            router.navigate(`/admin/catalog?tab=${t.tab}`);
          }}>${t.label}</a>`,
      )}</nav>
      ${auth.isSuperAdmin ? nothing : html`<p class="muted">Only a platform administrator (super_admin) changes the catalog; you see what it holds.</p>`}
      ${this.notice ? html`<p class="success" role="status" data-testid=${SHELL_TEST_IDS.notice}>${this.notice}</p>` : nothing}
      ${this.saveError && !this.editing ? html`<berth-error-panel heading="Not saved" .error=${this.saveError}></berth-error-panel>` : nothing}
      ${this.editing && this.editing.tab === tab ? this.#editor(this.editing) : nothing}
      ${renderTask(this.#data, {
        pendingLabel: "Loading the catalog…",
        isEmpty: (d) => d.rows.length === 0,
        empty: () =>
          html`<berth-empty-state heading="Nothing here yet">${form && auth.isSuperAdmin ? `Create the first ${form.noun} with the button above.` : "The platform's administrator adds these."}</berth-empty-state>`,
        complete: (d) => (d.tab === tab ? this.#body(d) : nothing),
      })}`;
  }
}
