// The password change. While must_change_password is set this is the only page the router lets through
// (the API refuses everything else with password_change_required too).
import { html, LitElement, nothing } from "lit";
import { auth, loadMe, router } from "../../app/context.ts";
import "../../components/error-panel/index.ts";
import { changePassword } from "../../app/account.ts";
import { passwordProblems } from "../../data/password.ts";
import { safeNext } from "../../router/routes.ts";
import { authCard } from "../../styles/forms.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { LOGIN_TEST_IDS } from "../../test-ids/login.ts";

export class BerthPasswordView extends LitElement {
  static override styles = [tokens, shared, authCard];
  static override properties = {
    next: { type: String },
    busy: { state: true },
    error: { state: true },
    problems: { state: true },
  };
  declare next: string;
  declare busy: boolean;
  declare error: unknown;
  declare problems: string[];

  constructor() {
    super();
    this.next = "";
    this.busy = false;
    this.error = undefined;
    this.problems = [];
  }

  async #submit(e: SubmitEvent): Promise<void> {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    const current = String(form.get("current") ?? "");
    const next = String(form.get("new") ?? "");
    const repeat = String(form.get("repeat") ?? "");
    this.problems = passwordProblems(current, next, repeat);
    this.error = undefined;
    if (this.problems.length) return;
    this.busy = true;
    try {
      const r = await changePassword(current, next);
      auth.accept(r);
      await loadMe();
      router.navigate(safeNext(this.next), { replace: true });
    } catch (err) {
      this.error = err;
      this.busy = false;
    }
  }

  override render() {
    const forced = auth.mustChangePassword;
    return html`<div class="auth">
      <h1>Change your password</h1>
      ${
        forced
          ? html`<p class="notice" role="status" data-testid=${LOGIN_TEST_IDS.forcedPasswordNotice}>
            This account must change its password before it can use Berth. Nothing else is available until you do.
          </p>`
          : nothing
      }
      <form class="card" @submit=${this.#submit} data-testid=${LOGIN_TEST_IDS.passwordForm} novalidate>
        <input type="text" name="username" autocomplete="username" value=${auth.email ?? ""} hidden />
        <div class="field">
          <label for="current">Current password</label>
          <input id="current" name="current" type="password" autocomplete="current-password" required autofocus data-testid=${LOGIN_TEST_IDS.passwordCurrent} />
        </div>
        <div class="field">
          <label for="new">New password</label>
          <input id="new" name="new" type="password" autocomplete="new-password" required minlength="12" aria-describedby="new-hint" data-testid=${LOGIN_TEST_IDS.passwordNew} />
          <p class="hint" id="new-hint">At least 12 characters, different from the current one.</p>
        </div>
        <div class="field">
          <label for="repeat">New password again</label>
          <input id="repeat" name="repeat" type="password" autocomplete="new-password" required data-testid=${LOGIN_TEST_IDS.passwordRepeat} />
        </div>
        ${
          this.problems.length
            ? html`<ul role="alert" class="problems" data-testid=${LOGIN_TEST_IDS.passwordProblems}>${this.problems.map((p) => html`<li>${p}</li>`)}</ul>`
            : nothing
        }
        ${this.error ? html`<berth-error-panel heading="The password was not changed" .error=${this.error}></berth-error-panel>` : nothing}
        <button class="primary" type="submit" ?disabled=${this.busy} data-testid=${LOGIN_TEST_IDS.passwordSubmit}>${this.busy ? "Saving…" : "Change password"}</button>
      </form>
    </div>`;
  }
}
