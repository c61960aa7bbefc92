// Users: find by email prefix, create with a temporary password (changed at first sign-in), disable or
// enable, delete. The API scopes the list to what the caller's role may see.
import { Task } from "@lit/task";
import { html, LitElement, nothing } from "lit";
import type { Organization, User } from "../../api/openapi.gen.ts";
import { auth } from "../../app/context.ts";
import { confirmAction } from "../../components/confirm-dialog/index.ts";
import "../../components/error-panel/index.ts";
import "../../components/pager/index.ts";
import { loadOrganizations } from "../../app/organizations.ts";
import { createUser, deleteUser, loadUsers, setUserDisabled } from "../../app/users.ts";
import { renderTask } from "../../components/task-states.ts";
import { formatRelative } from "../../data/format.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { DIRECTORY_TEST_IDS } from "../../test-ids/directory.ts";
import { USER_IMPORT_TEST_IDS } from "../../test-ids/user-import.ts";

export class BerthAdminUsersView extends LitElement {
  static override styles = [tokens, shared, page];
  static override properties = {
    query: { attribute: false },
    email: { state: true },
    pageNo: { state: true },
    showForm: { state: true },
    showImport: { state: true },
    error: { state: true },
    notice: { state: true },
  };
  declare query: URLSearchParams;
  declare email: string;
  declare pageNo: number;
  declare showForm: boolean;
  declare showImport: boolean;
  declare error: unknown;
  declare notice: string | undefined;

  #users = new Task(this, {
    task: async ([email, pageNo], { signal }) => loadUsers((email as string) || undefined, pageNo as number, signal),
    args: () => [this.email, this.pageNo],
  });
  #orgs = new Task(this, {
    task: async (_a, { signal }) => loadOrganizations(signal),
    args: () => [],
  });

  constructor() {
    super();
    this.query = new URLSearchParams();
    this.email = "";
    this.pageNo = 1;
    this.showForm = false;
    this.showImport = false;
    this.error = undefined;
    this.notice = undefined;
  }

  async #do(notice: string, fn: () => Promise<unknown>): Promise<boolean> {
    this.error = undefined;
    this.notice = undefined;
    try {
      await fn();
      this.notice = notice;
      void this.#users.run();
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
    const s = (k: string) => String(f.get(k) ?? "").trim();
    const ok = await this.#do(`Created ${s("email")}. They must change the temporary password at first sign-in.`, () =>
      createUser({
        email: s("email"),
        password: s("password"),
        ...(s("display_name") ? { display_name: s("display_name") } : {}),
        ...(s("organization_id")
          ? { organization_id: s("organization_id"), role: s("role") === "org_admin" ? "org_admin" : "member" }
          : {}),
        ...(f.get("is_super_admin") ? { is_super_admin: true } : {}),
      }),
    );
    if (ok) {
      form.reset();
      this.showForm = false;
    }
  }

  async #toggle(u: User): Promise<void> {
    if (!u.disabled) {
      const ok = await confirmAction({
        heading: `Disable ${u.email}?`,
        body: "Their tokens stop working at once; their sessions keep running until paused or terminated.",
        confirmLabel: "Disable",
        danger: true,
      });
      if (!ok) return;
    }
    await this.#do(`${u.email} is ${u.disabled ? "enabled" : "disabled"}.`, () => setUserDisabled(u.id, !u.disabled));
  }

  async #delete(u: User): Promise<void> {
    const ok = await confirmAction({
      heading: `Delete ${u.email}?`,
      body: "The account and its memberships are deleted. This cannot be undone.",
      confirmLabel: "Delete",
      danger: true,
    });
    if (ok) await this.#do(`${u.email} was deleted.`, () => deleteUser(u.id));
  }

  #form(orgs: Organization[]) {
    return html`<form class="card" @submit=${this.#create} data-testid=${DIRECTORY_TEST_IDS.createUserForm} aria-labelledby="cu-h">
      <h2 id="cu-h">New user</h2>
      <div class="grid2">
        <div class="field"><label for="u-email">Email</label><input id="u-email" name="email" type="email" required autocomplete="off" /></div>
        <div class="field"><label for="u-name">Display name (optional)</label><input id="u-name" name="display_name" autocomplete="off" /></div>
        <div class="field"><label for="u-pass">Temporary password</label><input id="u-pass" name="password" type="text" required minlength="12" autocomplete="off" aria-describedby="u-pass-hint" /><p class="hint" id="u-pass-hint">At least 12 characters; the user changes it at first sign-in.</p></div>
        <div class="field"><label for="u-org">Organization</label>
          <select id="u-org" name="organization_id"><option value="">${auth.isSuperAdmin ? "None" : "Choose…"}</option>${orgs.map((o) => html`<option value=${o.id}>${o.name}</option>`)}</select>
        </div>
        <div class="field"><label for="u-role">Role in the organization</label><select id="u-role" name="role"><option value="member">Member</option><option value="org_admin">Organization admin</option></select></div>
        ${auth.isSuperAdmin ? html`<div class="field check"><input id="u-sa" name="is_super_admin" type="checkbox" /><label for="u-sa">Super administrator</label></div>` : nothing}
      </div>
      <div class="row"><button class="primary" type="submit">Create user</button><button type="button" @click=${() => (this.showForm = false)}>Cancel</button></div>
    </form>`;
  }

  #table(users: User[]) {
    return html`<div class="table-wrap"><table data-testid=${DIRECTORY_TEST_IDS.usersTable}>
      <caption class="visually-hidden">Users</caption>
      <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">State</th><th scope="col" class="hide-narrow">Last sign-in</th><th scope="col">Actions</th></tr></thead>
      <tbody>${users.map(
        (u) => html`<tr data-testid=${DIRECTORY_TEST_IDS.userRow}>
          <td>${u.email}${u.display_name ? html`<br /><span class="muted">${u.display_name}</span>` : nothing}</td>
          <td>${u.is_super_admin ? "Super admin" : "User"}</td>
          <td>${u.disabled ? html`<span class="badge tone-bad">Disabled</span>` : html`<span class="badge tone-ok">Active</span>`}
            ${u.must_change_password ? html`<span class="badge tone-warn">Must change password</span>` : nothing}</td>
          <td class="hide-narrow">${formatRelative(u.last_login_at)}</td>
          <td class="actions">
            ${
              u.id === auth.userId
                ? html`<span class="muted">You</span>`
                : html`<button type="button" @click=${() => this.#toggle(u)} aria-label="${u.disabled ? "Enable" : "Disable"} ${u.email}">${u.disabled ? "Enable" : "Disable"}</button>
                  <button type="button" class="danger" @click=${() => this.#delete(u)} aria-label="Delete ${u.email}">Delete</button>`
            }
          </td>
        </tr>`,
      )}</tbody>
    </table></div>`;
  }

  override render() {
    return html`<div class="page-head"><h1>Users</h1><span class="spacer"></span>
        <button type="button" data-testid=${USER_IMPORT_TEST_IDS.open} aria-expanded=${this.showImport ? "true" : "false"} @click=${() => (this.showImport = !this.showImport)}>Import from CSV</button>
        ${this.showForm ? nothing : html`<button class="primary" type="button" @click=${() => (this.showForm = true)}>New user</button>`}</div>
      ${this.showImport ? html`<berth-user-import @berth-users-imported=${() => void this.#users.run()}></berth-user-import>` : nothing}
      ${this.notice ? html`<p class="success" role="status">${this.notice}</p>` : nothing}
      ${this.error ? html`<berth-error-panel heading="That did not work" .error=${this.error}></berth-error-panel>` : nothing}
      ${this.showForm ? renderTask(this.#orgs, { complete: (r) => this.#form(r.data) }) : nothing}
      <div class="filters" role="search">
        <div class="field"><label for="f-email">Email starts with</label><input id="f-email" type="search" .value=${this.email} @input=${(
          e: Event,
        ) => {
          this.email = (e.target as HTMLInputElement).value.trim();
          this.pageNo = 1;
        }} /></div>
      </div>
      ${renderTask(this.#users, {
        pendingLabel: "Loading users…",
        isEmpty: (r) => r.data.length === 0,
        empty: () =>
          html`<berth-empty-state heading="No user matches">Clear the filter, or create a user.</berth-empty-state>`,
        complete: (r) =>
          html`${this.#table(r.data)}<berth-pager .page=${r.pagination.page} .size=${r.pagination.size} .total=${r.pagination.total} @berth-page-change=${(e: CustomEvent<{ page: number }>) => (this.pageNo = e.detail.page)}></berth-pager>`,
      })}`;
  }
}
