// Projects (groups of an organization) and their members.
import { Task } from "@lit/task";
import { html, LitElement, nothing } from "lit";
import type { Organization, Project } from "../../api/openapi.gen.ts";
import { confirmAction } from "../../components/confirm-dialog/index.ts";
import "../../components/error-panel/index.ts";
import {
  addProjectMember,
  createProject,
  deleteProject,
  loadOrganizations,
  loadProjectMembers,
  loadProjects,
  removeProjectMember,
} from "../../app/organizations.ts";
import { membersSection } from "../../components/members-panel.ts";
import { renderTask } from "../../components/task-states.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { DIRECTORY_TEST_IDS } from "../../test-ids/directory.ts";

export class BerthAdminProjectsView extends LitElement {
  static override styles = [tokens, shared, page];
  static override properties = {
    org: { state: true },
    selected: { state: true },
    error: { state: true },
    notice: { state: true },
  };
  declare org: string;
  declare selected: string;
  declare error: unknown;
  declare notice: string | undefined;

  #orgs = new Task(this, {
    task: async (_a, { signal }) => loadOrganizations(signal),
    args: () => [],
  });
  #projects = new Task(this, {
    task: async ([org], { signal }) => loadProjects((org as string) || undefined, signal),
    args: () => [this.org],
  });
  #members = new Task(this, {
    task: async ([id], { signal }) => (id ? loadProjectMembers(id as string, signal) : undefined),
    args: () => [this.selected],
  });

  constructor() {
    super();
    this.org = "";
    this.selected = "";
    this.error = undefined;
    this.notice = undefined;
  }

  async #do(notice: string, fn: () => Promise<unknown>, reload: Task<readonly unknown[], unknown>): Promise<boolean> {
    this.error = undefined;
    this.notice = undefined;
    try {
      await fn();
      this.notice = notice;
      void reload.run();
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
    const organization_id = String(f.get("organization_id") ?? "");
    if (await this.#do(`Created ${name}.`, () => createProject(organization_id, name), this.#projects)) form.reset();
  }

  async #delete(p: Project): Promise<void> {
    if (
      await confirmAction({
        heading: `Delete ${p.name}?`,
        body: "Its memberships are removed.",
        confirmLabel: "Delete",
        danger: true,
      })
    ) {
      if (p.id === this.selected) this.selected = "";
      await this.#do(`${p.name} was deleted.`, () => deleteProject(p.id), this.#projects);
    }
  }

  #table(projects: Project[], orgs: Organization[]) {
    const orgName = (id: string) => orgs.find((o) => o.id === id)?.name ?? id;
    return html`<div class="table-wrap"><table data-testid=${DIRECTORY_TEST_IDS.projectsTable}>
      <caption class="visually-hidden">Projects</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Organization</th><th scope="col">Actions</th></tr></thead>
      <tbody>${projects.map(
        (p) => html`<tr><td>${p.name}</td><td>${orgName(p.organization_id)}</td>
          <td class="actions">
            <button type="button" @click=${() => (this.selected = p.id)} aria-label="Members of ${p.name}" aria-pressed=${p.id === this.selected ? "true" : "false"}>Members</button>
            <button type="button" class="danger" @click=${() => this.#delete(p)} aria-label="Delete ${p.name}">Delete</button>
          </td></tr>`,
      )}</tbody></table></div>`;
  }

  override render() {
    const orgs = this.#orgs.value?.data ?? [];
    const projectName = (this.#projects.value?.data ?? []).find((p) => p.id === this.selected)?.name ?? "";
    return html`<h1>Projects</h1>
      ${this.notice ? html`<p class="success" role="status">${this.notice}</p>` : nothing}
      ${this.error ? html`<berth-error-panel heading="That did not work" .error=${this.error}></berth-error-panel>` : nothing}
      <form class="row" style="margin-bottom:1rem" @submit=${this.#create}>
        <div style="flex:1;min-width:10rem"><label for="p-org">Organization</label><select id="p-org" name="organization_id" required>${orgs.map((o) => html`<option value=${o.id}>${o.name}</option>`)}</select></div>
        <div style="flex:1;min-width:10rem"><label for="p-name">New project</label><input id="p-name" name="name" required maxlength="128" /></div>
        <div style="align-self:end"><button class="primary" type="submit" ?disabled=${orgs.length === 0}>Create</button></div>
      </form>
      <div class="filters"><div class="field"><label for="f-org">Show organization</label>
        <select id="f-org" @change=${(e: Event) => (this.org = (e.target as HTMLSelectElement).value)}><option value="">All I may see</option>${orgs.map((o) => html`<option value=${o.id}>${o.name}</option>`)}</select></div></div>
      ${renderTask(this.#projects, {
        pendingLabel: "Loading projects…",
        isEmpty: (r) => r.data.length === 0,
        empty: () =>
          html`<berth-empty-state heading="No project yet">Projects group people of an organization; create one above.</berth-empty-state>`,
        complete: (r) => this.#table(r.data, orgs),
      })}
      ${
        this.selected
          ? membersSection({
              task: this.#members,
              heading: `Members of ${projectName}`,
              roles: [
                { value: "member", label: "Member" },
                { value: "project_admin", label: "Project admin" },
              ],
              add: (email, role) =>
                addProjectMember(this.selected, { email, role: role === "project_admin" ? "project_admin" : "member" }),
              remove: (userId) => removeProjectMember(this.selected, userId),
              run: (notice, change) => void this.#do(notice, change, this.#members),
            })
          : nothing
      }`;
  }
}
