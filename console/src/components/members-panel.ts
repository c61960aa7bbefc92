// Members of an organization or a project: list, add by email with a role, remove. Shared by the
// organizations and projects pages.
import type { Task } from "@lit/task";
import { html, nothing } from "lit";
import type { Member } from "../api/openapi.gen.ts";
import { DIRECTORY_TEST_IDS } from "../test-ids/directory.ts";
import { renderTask } from "./task-states.ts";

export interface MembersPanelProps {
  heading: string;
  members: Member[];
  roles: { value: string; label: string }[];
  onAdd: (email: string, role: string) => void;
  onRemove: (m: Member) => void;
}

export function membersPanel(p: MembersPanelProps) {
  return html`<section class="card" aria-label=${p.heading} data-testid=${DIRECTORY_TEST_IDS.membersPanel}>
    <h2>${p.heading}</h2>
    ${
      p.members.length === 0
        ? html`<p class="muted">No member yet. Add one by email below.</p>`
        : html`<div class="table-wrap"><table>
          <caption class="visually-hidden">${p.heading}</caption>
          <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Actions</th></tr></thead>
          <tbody>${p.members.map(
            (m) => html`<tr><td>${m.email}</td><td>${m.role.replace("_", " ")}</td>
              <td><button type="button" class="danger" @click=${() => p.onRemove(m)} aria-label="Remove ${m.email}">Remove</button></td></tr>`,
          )}</tbody></table></div>`
    }
    <form class="row" style="margin-top:0.75rem" @submit=${(e: SubmitEvent) => {
      e.preventDefault();
      const f = new FormData(e.target as HTMLFormElement);
      p.onAdd(String(f.get("email") ?? "").trim(), String(f.get("role") ?? ""));
      (e.target as HTMLFormElement).reset();
    }}>
      <div style="flex:2;min-width:12rem"><label for="m-email">Email</label><input id="m-email" name="email" type="email" required /></div>
      <div style="flex:1;min-width:8rem"><label for="m-role">Role</label><select id="m-role" name="role">${p.roles.map((r) => html`<option value=${r.value}>${r.label}</option>`)}</select></div>
      <div style="align-self:end"><button type="submit">Add member</button></div>
    </form>
    ${nothing}
  </section>`;
}

export interface MembersSectionProps {
  /** Loads the selected organization's or project's members (undefined while none is selected). */
  task: Task<readonly unknown[], { data: Member[] } | undefined>;
  heading: string;
  roles: { value: string; label: string }[];
  add: (email: string, role: string) => Promise<unknown>;
  remove: (userId: string) => Promise<unknown>;
  /** Runs a change with the page's notice and error handling, then reloads the members. */
  run: (notice: string, change: () => Promise<unknown>) => void;
}

/** The members panel of the selected organization or project, with its loading and error states. */
export function membersSection(p: MembersSectionProps) {
  return renderTask(p.task, {
    pendingLabel: "Loading members…",
    complete: (r) =>
      r
        ? membersPanel({
            heading: p.heading,
            members: r.data,
            roles: p.roles,
            onAdd: (email, role) => p.run(`Added ${email}.`, () => p.add(email, role)),
            onRemove: (m) => p.run(`Removed ${m.email}.`, () => p.remove(m.user_id)),
          })
        : nothing,
  });
}
