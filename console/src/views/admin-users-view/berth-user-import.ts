// Bulk import on the Users page: pick a CSV, start a dry run, watch it run and see each row's outcome, then
// import. Both run as jobs in the worker (docs/dev/identity.md, "Bulk import"): the page shows the rows done
// while it waits. The temporary passwords of the accounts made are fetched once, on the admin's click, and
// erased by Berth as they are shown; every row's result can be downloaded as CSV.
import { html, LitElement, nothing } from "lit";
import type { UserImport, UserImportRow } from "../../api/openapi.gen.ts";
import { importResults, importUsers, takeImportPasswords, waitForImport } from "../../app/users.ts";
import "../../components/error-panel/index.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { USER_IMPORT_TEST_IDS as IDS } from "../../test-ids/user-import.ts";

const TONE: Record<UserImportRow["outcome"], string> = {
  create: "tone-ok",
  update: "tone-info",
  unchanged: "",
  error: "tone-bad",
};

type Passwords = { email: string; user_id: string; password: string }[];

export class BerthUserImport extends LitElement {
  static override styles = [tokens, shared, page];
  static override properties = {
    csv: { state: true },
    fileName: { state: true },
    result: { state: true },
    passwords: { state: true },
    busy: { state: true },
    error: { state: true },
  };
  declare csv: string | undefined;
  declare fileName: string;
  declare result: UserImport | undefined;
  declare passwords: Passwords | undefined;
  declare busy: boolean;
  declare error: unknown;
  #leave = new AbortController();

  constructor() {
    super();
    this.csv = undefined;
    this.fileName = "";
    this.result = undefined;
    this.passwords = undefined;
    this.busy = false;
    this.error = undefined;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.#leave = new AbortController();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#leave.abort();
  }

  async #pick(e: Event): Promise<void> {
    const file = (e.target as HTMLInputElement).files?.[0];
    this.result = undefined;
    this.passwords = undefined;
    this.error = undefined;
    this.csv = file ? await file.text() : undefined;
    this.fileName = file?.name ?? "";
  }

  async #send(dryRun: boolean): Promise<void> {
    if (this.csv === undefined) return;
    this.busy = true;
    this.error = undefined;
    this.passwords = undefined;
    try {
      const started = await importUsers(this.csv, dryRun);
      this.result = started;
      this.result = await waitForImport(started.id, (job) => (this.result = job), this.#leave.signal);
      if (!dryRun) this.dispatchEvent(new CustomEvent("berth-users-imported", { bubbles: true, composed: true }));
    } catch (err) {
      if (!this.#leave.signal.aborted) this.error = err;
    } finally {
      this.busy = false;
    }
  }

  async #reveal(): Promise<void> {
    if (!this.result) return;
    try {
      this.passwords = (await takeImportPasswords(this.result.id)).temporary_passwords;
      this.result = { ...this.result, temporary_passwords: { ...this.result.temporary_passwords, state: "fetched" } };
    } catch (err) {
      this.error = err;
    }
  }

  async #download(): Promise<void> {
    if (!this.result) return;
    try {
      const res = await importResults(this.result.id);
      const a = document.createElement("a");
      a.href = URL.createObjectURL(await res.blob());
      a.download = `user-import-${this.result.id}.csv`;
      this.renderRoot.appendChild(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
    } catch (err) {
      this.error = err;
    }
  }

  #passwords(r: UserImport) {
    const p = r.temporary_passwords;
    if (this.passwords && this.passwords.length > 0)
      return html`<div class="card" data-testid=${IDS.passwords} role="region" aria-labelledby="imp-pw-h">
        <h3 id="imp-pw-h">Temporary passwords — shown this once</h3>
        <p class="hint">Hand each to its person. Their first sign-in asks for a password of their own. Berth erased its sealed copy as it showed them.</p>
        <div class="table-wrap"><table><thead><tr><th scope="col">Email</th><th scope="col">Temporary password</th></tr></thead>
        <tbody>${this.passwords.map((x) => html`<tr><td>${x.email}</td><td><code>${x.password}</code></td></tr>`)}</tbody></table></div>
      </div>`;
    if (p.state !== "held") return nothing;
    return html`<div class="card" role="region" aria-labelledby="imp-pw-h">
      <h3 id="imp-pw-h">${p.count} temporary passwords</h3>
      <p class="hint">Berth holds them sealed until you show them, once${p.expires_at ? html`, and erases them unseen at ${new Date(p.expires_at).toLocaleString()}` : nothing}. Have somewhere to keep them before you show them.</p>
      <button class="primary" type="button" data-testid=${IDS.reveal} @click=${() => this.#reveal()}>Show the temporary passwords (once)</button>
    </div>`;
  }

  #progress(r: UserImport) {
    return html`<p role="status" data-testid=${IDS.progress}>
        ${r.state === "queued" ? "Waiting for the worker…" : `Running — ${r.rows_done} of ${r.rows_total} rows.`}
      </p>
      <progress max=${r.rows_total} .value=${r.rows_done} aria-label="Rows done"></progress>`;
  }

  #rows(r: UserImport) {
    const c = r.counts;
    return html`<p role="status" data-testid=${IDS.counts}>
        ${
          r.state === "failed"
            ? `Stopped before the end (${r.failure?.code ?? "failed"}: ${r.failure?.message ?? ""}). ${r.rows_done} of ${r.rows_total} rows done: ${c.create} created, ${c.update} updated, ${c.unchanged} unchanged, ${c.error} with errors.`
            : r.dry_run
              ? `Dry run — nothing was written. ${c.create} to create, ${c.update} to update, ${c.unchanged} unchanged, ${c.error} with errors.`
              : `Imported. ${c.create} created, ${c.update} updated, ${c.unchanged} unchanged, ${c.error} with errors (not imported).`
        }</p>
      <div class="table-wrap"><table>
        <caption class="visually-hidden">Outcome of each row</caption>
        <thead><tr><th scope="col">Line</th><th scope="col">Email</th><th scope="col">Organization</th><th scope="col">Role</th><th scope="col">Outcome</th><th scope="col">Why</th></tr></thead>
        <tbody>${r.rows.map(
          (x) => html`<tr data-testid=${IDS.row} data-outcome=${x.outcome} data-code=${x.code ?? ""}>
            <td>${x.line}</td><td>${x.email}</td><td>${x.organization}${x.project ? html` / ${x.project}` : nothing}</td>
            <td>${x.role || "member"}</td>
            <td><span class="badge ${TONE[x.outcome]}">${x.outcome}</span>${x.welcome_credit === "unpaid" ? html` <span class="badge tone-warn">welcome credit unpaid</span>` : nothing}</td>
            <td>${x.code ? html`<code>${x.code}</code> ` : nothing}${x.message}</td>
          </tr>`,
        )}</tbody>
      </table></div>
      <div class="row">
        ${r.dry_run ? html`<button class="primary" type="button" data-testid=${IDS.run} ?disabled=${this.busy || r.counts.create + r.counts.update === 0} @click=${() => this.#send(false)}>Import ${r.counts.create + r.counts.update} rows</button>` : nothing}
        <button type="button" data-testid=${IDS.download} @click=${() => this.#download()}>Download results (CSV)</button>
      </div>
      ${this.#passwords(r)}`;
  }

  override render() {
    const r = this.result;
    return html`<section class="card" aria-labelledby="imp-h">
      <h2 id="imp-h">Import users from CSV</h2>
      <p class="hint">Columns: <code>email,name,organization,project,role,initial_credits</code> (email required; organization by slug or id; role member, org_admin or project_admin; credits like 10 or 2.5). At most 10,000 rows. A dry run comes first; running the same file again changes nothing. Both run in the background; this page shows the rows done while a large file runs.</p>
      <div class="row">
        <label for="imp-file" class="visually-hidden">CSV file</label>
        <input id="imp-file" type="file" accept=".csv,text/csv" data-testid=${IDS.file} @change=${this.#pick} />
        <button type="button" data-testid=${IDS.dryRun} ?disabled=${this.csv === undefined || this.busy} @click=${() => this.#send(true)}>Dry run</button>
      </div>
      ${this.error ? html`<berth-error-panel heading="The file was not imported" .error=${this.error}></berth-error-panel>` : nothing}
      ${r && (r.state === "queued" || r.state === "running") ? this.#progress(r) : nothing}
      ${r && (r.state === "succeeded" || r.state === "failed") ? this.#rows(r) : nothing}
    </section>`;
  }
}
