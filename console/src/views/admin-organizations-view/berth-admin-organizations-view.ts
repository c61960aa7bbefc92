// Organizations and their members.
import { Task } from "@lit/task";
import { html, LitElement, nothing } from "lit";
import type { Organization } from "../../api/openapi.gen.ts";
import { auth } from "../../app/context.ts";
import { confirmAction } from "../../components/confirm-dialog/index.ts";
import "../../components/error-panel/index.ts";
import {
  addOrganizationMember,
  createOrganization,
  deleteOrganization,
  loadOrganizationMembers,
  loadOrganizations,
  removeOrganizationMember,
} from "../../app/organizations.ts";
import { membersSection } from "../../components/members-panel.ts";
import { renderTask } from "../../components/task-states.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { DIRECTORY_TEST_IDS } from "../../test-ids/directory.ts";

export class BerthAdminOrganizationsView extends LitElement {
  static override styles = [tokens, shared, page];
  static override properties = { selected: { state: true }, error: { state: true }, notice: { state: true } };
  declare selected: string;
  declare error: unknown;
  declare notice: string | undefined;

  #orgs = new Task(this, {
    task: async (_a, { signal }) => loadOrganizations(signal),
    args: () => [],
  });
  #members = new Task(this, {
    task: async ([id], { signal }) => (id ? loadOrganizationMembers(id as string, signal) : undefined),
    args: () => [this.selected],
  });

  constructor() {
    super();
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
    const name = String(new FormData(form).get("name") ?? "").trim();
    if (await this.#do(`Created ${name}.`, () => createOrganization(name), this.#orgs)) form.reset();
  }

  async #delete(o: Organization): Promise<void> {
    if (
      await confirmAction({
        heading: `Delete ${o.name}?`,
        body: "Refused while it has projects. Its memberships are removed.",
        confirmLabel: "Delete",
        danger: true,
      })
    ) {
      if (o.id === this.selected) this.selected = "";
      await this.#do(`${o.name} was deleted.`, () => deleteOrganization(o.id), this.#orgs);
    }
  }

  #table(orgs: Organization[]) {
    return html`<div class="table-wrap"><table data-testid=${DIRECTORY_TEST_IDS.organizationsTable}>
      <caption class="visually-hidden">Organizations</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Slug</th><th scope="col">Actions</th></tr></thead>
      <tbody>${orgs.map(
        (o) => html`<tr aria-selected=${o.id === this.selected ? "true" : "false"}>
          <td>${o.name}</td><td><code>${o.slug}</code></td>
          <td class="actions">
            <button type="button" @click=${() => (this.selected = o.id)} aria-label="Members of ${o.name}" aria-pressed=${o.id === this.selected ? "true" : "false"}>Members</button>
            ${auth.isSuperAdmin ? html`<button type="button" class="danger" @click=${() => this.#delete(o)} aria-label="Delete ${o.name}">Delete</button>` : nothing}
          </td></tr>`,
      )}</tbody></table></div>`;
  }

  override render() {
    const orgName = (this.#orgs.value?.data ?? []).find((o) => o.id === this.selected)?.name ?? "";
    return html`<h1>Organizations</h1>
      ${this.notice ? html`<p class="success" role="status">${this.notice}</p>` : nothing}
      ${this.error ? html`<berth-error-panel heading="That did not work" .error=${this.error}></berth-error-panel>` : nothing}
      ${
        auth.isSuperAdmin
          ? html`<form class="row" style="margin-bottom:1rem" @submit=${this.#create}>
            <div style="flex:1;min-width:12rem"><label for="o-name">New organization</label><input id="o-name" name="name" required maxlength="128" /></div>
            <div style="align-self:end"><button class="primary" type="submit">Create</button></div>
          </form>`
          : nothing
      }
      ${renderTask(this.#orgs, {
        pendingLabel: "Loading organizations…",
        isEmpty: (r) => r.data.length === 0,
        empty: () =>
          html`<berth-empty-state heading="No organization yet">Create the first one to add people and projects.</berth-empty-state>`,
        complete: (r) => this.#table(r.data),
      })}
      ${
        this.selected
          ? membersSection({
              task: this.#members,
              heading: `Members of ${orgName}`,
              roles: [
                { value: "member", label: "Member" },
                { value: "org_admin", label: "Organization admin" },
              ],
              add: (email, role) =>
                addOrganizationMember(this.selected, { email, role: role === "org_admin" ? "org_admin" : "member" }),
              remove: (userId) => removeOrganizationMember(this.selected, userId),
              run: (notice, change) => void this.#do(notice, change, this.#members),
            })
          : nothing
      }`;
  }
}
