// A cluster's node pools (super_admin): each pool's selector, the nodes it holds now and who it is granted
// to; make a pool, grant it to an organization, to one of an organization's projects or to one person (by
// email), remove a grant (the owners of sessions running there are warned) or the pool. Lives on the cluster's page: a pool is a selector over that cluster's nodes.
import { Task, TaskStatus } from "@lit/task";
import { css, html, LitElement, nothing } from "lit";
import type { LabelledNodePool } from "../../api/openapi.gen.ts";
import {
  createNodePool,
  deleteNodePool,
  findUserByEmail,
  grantNodePool,
  loadNodePools,
  loadProjectsByOrganization,
  revokeNodePoolGrant,
} from "../../app/node-pools.ts";
import { loadOrganizations } from "../../app/organizations.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { NODE_POOLS_TEST_IDS as T } from "../../test-ids/node-pools.ts";
import { confirmAction } from "../confirm-dialog/index.ts";
import "../empty-state/index.ts";
import "../error-panel/index.ts";
import { renderTask } from "../task-states.ts";

const GRANTEE_LABEL = { organization: "Organization", project: "Project", user: "Person" } as const;
type Grant = LabelledNodePool["grants"][number];

/** A project's name repeats across organizations: its organization goes with it. */
function granteeText(g: Grant): string {
  const name = g.grantee_name ?? g.grantee_id;
  return g.grantee_organization_name ? `${name} (${g.grantee_organization_name})` : name;
}

// Each grant form is a group with a short visible legend, so the three read apart at a glance.
const grantForms = css`
  ul.plain {
    list-style: none;
    padding: 0;
    margin: 0;
  }
  form.grant fieldset {
    border: 0;
    padding: 0;
    margin: 0.5rem 0 0;
  }
  form.grant select,
  form.grant input {
    width: auto;
    flex: 1 1 9rem;
    min-width: 0;
  }
  form.grant legend {
    font-size: 0.8rem;
    font-weight: 600;
    color: var(--berth-fg-muted);
    padding: 0;
    margin-bottom: 0.2rem;
  }
`;

export class BerthNodePools extends LitElement {
  static override styles = [tokens, shared, page, grantForms];
  static override properties = {
    clusterId: { type: String },
    error: { state: true },
    notice: { state: true },
    projectOrgs: { state: true },
  };
  declare clusterId: string;
  declare error: unknown;
  declare notice: string | undefined;
  /** The organization each pool's project form has picked (pool id → organization id). */
  declare projectOrgs: Readonly<Record<string, string>>;

  #pools = new Task(this, {
    task: async ([id], { signal }) => loadNodePools(id as string, signal),
    args: () => [this.clusterId],
  });
  #orgs = new Task(this, {
    task: async (_a, { signal }) => loadOrganizations(signal),
    args: () => [],
  });
  #projects = new Task(this, {
    task: async ([ids], { signal }) => loadProjectsByOrganization((ids as string).split(","), signal),
    args: () => [[...new Set(Object.values(this.projectOrgs))].sort().join(",")],
  });

  constructor() {
    super();
    this.clusterId = "";
    this.error = undefined;
    this.notice = undefined;
    this.projectOrgs = {};
  }

  #pickProjectOrg(p: LabelledNodePool, organizationId: string) {
    this.projectOrgs = { ...this.projectOrgs, [p.id]: organizationId };
  }

  async #do(notice: string, fn: () => Promise<unknown>): Promise<boolean> {
    this.error = undefined;
    this.notice = undefined;
    try {
      await fn();
      this.notice = notice;
      void this.#pools.run();
      return true;
    } catch (e) {
      this.error = e;
      return false;
    }
  }

  async #create(e: SubmitEvent) {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    const f = new FormData(form);
    const name = String(f.get("name") ?? "").trim();
    const ok = await this.#do(`Pool ${name} made. It is closed to every session until you grant it.`, () =>
      createNodePool(this.clusterId, { name, selector: String(f.get("selector") ?? "").trim() }),
    );
    if (ok) form.reset();
  }

  async #grant(e: SubmitEvent, p: LabelledNodePool) {
    e.preventDefault();
    const org = String(new FormData(e.target as HTMLFormElement).get("organization_id") ?? "");
    await this.#do(`Pool ${p.name} granted.`, () => grantNodePool(this.clusterId, p.id, { organization_id: org }));
  }

  async #grantUser(e: SubmitEvent, p: LabelledNodePool) {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    const email = String(new FormData(form).get("email") ?? "").trim();
    const ok = await this.#do(
      `Pool ${p.name} granted to ${email}: only sessions they own are placed there.`,
      async () => {
        const user = await findUserByEmail(email);
        if (!user) throw new Error(`No account has the email ${email}.`);
        return grantNodePool(this.clusterId, p.id, { user_id: user.id });
      },
    );
    if (ok) form.reset();
  }

  async #grantProject(e: SubmitEvent, p: LabelledNodePool) {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    const projectId = String(new FormData(form).get("project_id") ?? "");
    const project = this.#projects.value?.get(this.projectOrgs[p.id] ?? "")?.find((x) => x.id === projectId);
    const ok = await this.#do(
      `Pool ${p.name} granted to project ${project?.name ?? projectId}: its members' sessions are placed there.`,
      () => grantNodePool(this.clusterId, p.id, { project_id: projectId }),
    );
    if (ok) {
      form.reset();
      this.#pickProjectOrg(p, "");
    } else void this.#projects.run(); // a project deleted since the list loaded leaves it
  }

  async #revoke(p: LabelledNodePool, g: Grant) {
    const ok = await confirmAction({
      heading: `Remove ${granteeText(g)}'s grant of ${p.name}?`,
      body: "Their new sessions are no longer placed on this pool's nodes. Sessions running there keep running; their owners are told.",
      confirmLabel: "Remove the grant",
      danger: true,
    });
    if (!ok) return;
    this.error = undefined;
    try {
      const r = await revokeNodePoolGrant(this.clusterId, p.id, g.id);
      this.notice = `Grant removed. ${r.warned_sessions.length} running session(s) warned.`;
      void this.#pools.run();
    } catch (e) {
      this.error = e;
    }
  }

  async #delete(p: LabelledNodePool) {
    const ok = await confirmAction({
      heading: `Delete pool ${p.name}?`,
      body: "Its nodes are open to every session again.",
      confirmLabel: "Delete",
      danger: true,
    });
    if (ok) await this.#do(`Pool ${p.name} deleted.`, () => deleteNodePool(this.clusterId, p.id));
  }

  /** Pick the organization, then one of its projects (loaded when the organization is picked). */
  #projectForm(p: LabelledNodePool) {
    const orgs = this.#orgs.value?.data ?? [];
    const orgId = this.projectOrgs[p.id] ?? "";
    const projects = orgId ? this.#projects.value?.get(orgId) : undefined;
    const loading = orgId !== "" && projects === undefined && this.#projects.status === TaskStatus.PENDING;
    const failed = orgId !== "" && this.#projects.status === TaskStatus.ERROR;
    const none = projects !== undefined && projects.length === 0;
    return html`<form class="grant" @submit=${(e: SubmitEvent) => this.#grantProject(e, p)} data-testid=${T.grantProjectForm}>
      <fieldset>
        <legend>Project</legend>
        <div class="row">
          <label class="visually-hidden" for="grant-project-org-${p.id}">Organization of the project to grant ${p.name} to</label>
          <select id="grant-project-org-${p.id}" name="organization_id" required
            @change=${(e: Event) => this.#pickProjectOrg(p, (e.target as HTMLSelectElement).value)}>
            <option value="" ?selected=${orgId === ""}>Organization…</option>
            ${orgs.map((o) => html`<option value=${o.id} ?selected=${o.id === orgId}>${o.name}</option>`)}
          </select>
          <label class="visually-hidden" for="grant-project-${p.id}">Project to grant ${p.name} to</label>
          <select id="grant-project-${p.id}" name="project_id" required ?disabled=${!projects?.length}>
            ${
              loading
                ? html`<option value="">Loading projects…</option>`
                : projects?.length
                  ? projects.map((x) => html`<option value=${x.id}>${x.name}</option>`)
                  : html`<option value="">Project…</option>`
            }
          </select>
          <button type="submit" ?disabled=${!projects?.length}>Grant to this project</button>
        </div>
        ${
          none
            ? html`<p class="hint" role="status" data-testid=${T.noProjects}>${orgs.find((o) => o.id === orgId)?.name ?? orgId} has no projects: make one on the Projects page first, or grant the whole organization.</p>`
            : nothing
        }
        ${
          failed
            ? html`<berth-error-panel retryable heading="Its projects could not be loaded" .error=${this.#projects.error} @berth-retry=${() => void this.#projects.run()}></berth-error-panel>`
            : nothing
        }
      </fieldset>
    </form>`;
  }

  #row(p: LabelledNodePool) {
    const orgs = this.#orgs.value?.data ?? [];
    return html`<tr data-testid=${T.row} data-pool=${p.name}>
      <td><strong>${p.name}</strong><br /><code>${p.selector}</code></td>
      <td data-testid=${T.nodes}>${p.nodes.length ? p.nodes.map((n) => html`<code>${n}</code> `) : html`<span class="muted">none now</span>`}</td>
      <td>
        ${
          p.grants.length
            ? html`<ul class="plain">${p.grants.map(
                (g) => html`<li data-testid=${T.grant}>${GRANTEE_LABEL[g.grantee_kind]} ${granteeText(g)}
                  <button type="button" class="danger" @click=${() => this.#revoke(p, g)} aria-label="Remove the grant of ${p.name} to ${granteeText(g)}">Remove</button></li>`,
              )}</ul>`
            : html`<span class="badge tone-warn">Closed: granted to nobody</span>`
        }
        <form class="grant" @submit=${(e: SubmitEvent) => this.#grant(e, p)} data-testid=${T.grantForm}>
          <fieldset>
            <legend>Organization</legend>
            <div class="row">
              <label class="visually-hidden" for="grant-${p.id}">Organization to grant ${p.name} to</label>
              <select id="grant-${p.id}" name="organization_id" required>
                ${orgs.map((o) => html`<option value=${o.id}>${o.name}</option>`)}
              </select>
              <button type="submit">Grant</button>
            </div>
          </fieldset>
        </form>
        ${this.#projectForm(p)}
        <form class="grant" @submit=${(e: SubmitEvent) => this.#grantUser(e, p)} data-testid=${T.grantUserForm}>
          <fieldset>
            <legend>Person</legend>
            <div class="row">
              <label class="visually-hidden" for="grant-user-${p.id}">Email of the person to grant ${p.name} to</label>
              <input id="grant-user-${p.id}" name="email" type="email" required autocomplete="off" placeholder="pi@example.org" />
              <button type="submit">Grant to this person</button>
            </div>
          </fieldset>
        </form>
      </td>
      <td class="actions"><button type="button" class="danger" @click=${() => this.#delete(p)} aria-label="Delete pool ${p.name}">Delete</button></td>
    </tr>`;
  }

  override render() {
    return html`<section class="card" aria-labelledby="pools-h" data-testid=${T.section}>
      <h2 id="pools-h">Node pools</h2>
      <p class="hint">Reserve this cluster's nodes for organizations, projects or one person (a PI's own nodes): a pool is the nodes with one label (<code>key=value</code> or <code>key in (a,b)</code>). Only its grantees' sessions are placed there; nodes in no pool are open to everyone.</p>
      ${this.notice ? html`<p class="success" role="status" data-testid=${T.notice}>${this.notice}</p>` : nothing}
      ${this.error ? html`<berth-error-panel heading="That did not work" .error=${this.error}></berth-error-panel>` : nothing}
      ${renderTask(this.#pools, {
        pendingLabel: "Loading node pools…",
        isEmpty: (r) => r.data.length === 0,
        empty: () =>
          html`<berth-empty-state heading="No node pool">Every node of this cluster is open to every session.</berth-empty-state>`,
        complete: (r) => html`<div class="table-wrap"><table data-testid=${T.table}>
          <caption class="visually-hidden">Node pools of this cluster</caption>
          <thead><tr><th scope="col">Pool</th><th scope="col">Nodes now</th><th scope="col">Granted to</th><th scope="col">Actions</th></tr></thead>
          <tbody>${r.data.map((p) => this.#row(p))}</tbody>
        </table></div>`,
      })}
      <form class="row" @submit=${this.#create} data-testid=${T.createForm}>
        <div class="field"><label for="np-name">Name</label><input id="np-name" name="name" required placeholder="research" /></div>
        <div class="field"><label for="np-selector">Nodes with the label</label><input id="np-selector" name="selector" required placeholder="berth.dev/pool=research" /></div>
        <button class="primary" type="submit">Make the pool</button>
      </form>
    </section>`;
  }
}
