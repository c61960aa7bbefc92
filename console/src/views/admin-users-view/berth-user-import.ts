// Bulk import on the Users page: pick a CSV, see the dry run's outcome per row, then import. The
// temporary passwords of the accounts made are shown once (they are stored nowhere in clear), and every
// row's result can be downloaded as CSV.
import { html, LitElement, nothing } from "lit";
import type { CreatedUserImport, UserImportRow } from "../../api/openapi.gen.ts";
import { importResults, importUsers } from "../../app/users.ts";
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

export class BerthUserImport extends LitElement {
  static override styles = [tokens, shared, page];
  static override properties = {
    csv: { state: true },
    fileName: { state: true },
    result: { state: true },
    busy: { state: true },
    error: { state: true },
  };
  declare csv: string | undefined;
  declare fileName: string;
  declare result: CreatedUserImport | undefined;
  declare busy: boolean;
  declare error: unknown;

  constructor() {
    super();
    this.csv = undefined;
    this.fileName = "";
    this.result = undefined;
    this.busy = false;
    this.error = undefined;
  }

  async #pick(e: Event): Promise<void> {
    const file = (e.target as HTMLInputElement).files?.[0];
    this.result = undefined;
    this.error = undefined;
    this.csv = file ? await file.text() : undefined;
    this.fileName = file?.name ?? "";
  }

  async #send(dryRun: boolean): Promise<void> {
    if (this.csv === undefined) return;
    this.busy = true;
    this.error = undefined;
    try {
      this.result = await importUsers(this.csv, dryRun);
      if (!dryRun) this.dispatchEvent(new CustomEvent("berth-users-imported", { bubbles: true, composed: true }));
    } catch (err) {
      this.error = err;
    } finally {
      this.busy = false;
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

  #passwords(r: CreatedUserImport) {
    if (r.temporary_passwords.length === 0) return nothing;
    return html`<div class="card" data-testid=${IDS.passwords} role="region" aria-labelledby="imp-pw-h">
      <h3 id="imp-pw-h">Temporary passwords — shown this once</h3>
      <p class="hint">Hand each to its person. Their first sign-in asks for a password of their own. Berth keeps no copy.</p>
      <div class="table-wrap"><table><thead><tr><th scope="col">Email</th><th scope="col">Temporary password</th></tr></thead>
      <tbody>${r.temporary_passwords.map((p) => html`<tr><td>${p.email}</td><td><code>${p.password}</code></td></tr>`)}</tbody></table></div>
    </div>`;
  }

  #rows(r: CreatedUserImport) {
    const c = r.counts;
    return html`<p role="status" data-testid=${IDS.counts}>
        ${
          r.dry_run
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
    return html`<section class="card" aria-labelledby="imp-h">
      <h2 id="imp-h">Import users from CSV</h2>
      <p class="hint">Columns: <code>email,name,organization,project,role,initial_credits</code> (email required; organization by slug or id; role member, org_admin or project_admin; credits like 10 or 2.5). At most 10,000 rows. A dry run comes first; running the same file again changes nothing.</p>
      <div class="row">
        <label for="imp-file" class="visually-hidden">CSV file</label>
        <input id="imp-file" type="file" accept=".csv,text/csv" data-testid=${IDS.file} @change=${this.#pick} />
        <button type="button" data-testid=${IDS.dryRun} ?disabled=${this.csv === undefined || this.busy} @click=${() => this.#send(true)}>Dry run</button>
      </div>
      ${this.error ? html`<berth-error-panel heading="The file was not imported" .error=${this.error}></berth-error-panel>` : nothing}
      ${this.result ? this.#rows(this.result) : nothing}
    </section>`;
  }
}
