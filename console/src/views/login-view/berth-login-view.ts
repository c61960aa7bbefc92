// Sign-in. After an expired token the user lands here with ?next= (their place) and a notice; signing in
// takes them back there, or to the forced password change first.
import { html, LitElement, nothing } from "lit";
import { auth, branding, loadMe, router } from "../../app/context.ts";
import "../../components/error-panel/index.ts";
import { login } from "../../app/account.ts";
import { pathFor, safeNext } from "../../router/routes.ts";
import { authCard } from "../../styles/forms.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { LOGIN_TEST_IDS } from "../../test-ids/login.ts";

export class BerthLoginView extends LitElement {
  static override styles = [tokens, shared, authCard];
  static override properties = { next: { type: String }, busy: { state: true }, error: { state: true } };
  declare next: string;
  declare busy: boolean;
  declare error: unknown;

  constructor() {
    super();
    this.next = "";
    this.busy = false;
    this.error = undefined;
  }

  async #submit(e: SubmitEvent): Promise<void> {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    this.busy = true;
    this.error = undefined;
    try {
      const r = await login(String(form.get("email") ?? ""), String(form.get("password") ?? ""));
      auth.accept(r);
      const next = safeNext(this.next);
      if (r.must_change_password) {
        router.navigate(pathFor("password", {}, { next: this.next ? next : undefined }), { replace: true });
        return;
      }
      await loadMe();
      // accept() already took the person on (the shell re-runs the guard on an auth change). A page they
      // opened while the account loaded stays: only a router still at this form is moved, else the roles
      // now known re-check where they are.
      if (router.current.route.name === "login") router.navigate(next, { replace: true });
      else router.resolve();
    } catch (err) {
      this.error = err;
      this.busy = false;
    }
  }

  #onBranding = () => this.requestUpdate();

  override connectedCallback(): void {
    super.connectedCallback();
    branding.addEventListener("change", this.#onBranding);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    branding.removeEventListener("change", this.#onBranding);
  }

  override render() {
    const expired = auth.lastSignOut === "expired" || auth.lastSignOut === "revoked";
    const b = branding.current;
    return html`<div class="auth">
      ${b.logo ? html`<img class="auth-logo" src=${b.logo} alt="${b.product_name} logo" data-testid=${LOGIN_TEST_IDS.loginLogo} />` : nothing}
      <h1 data-testid=${LOGIN_TEST_IDS.loginHeading}>Sign in to ${b.product_name}</h1>
      ${
        expired
          ? html`<p class="notice" role="status" data-testid=${LOGIN_TEST_IDS.expiredNotice}>Your sign-in expired. Sign in again to continue where you were.</p>`
          : this.next
            ? html`<p class="notice" role="status">Sign in to continue.</p>`
            : nothing
      }
      <form class="card" @submit=${this.#submit} data-testid=${LOGIN_TEST_IDS.loginForm}>
        <div class="field">
          <label for="email">Email</label>
          <input id="email" name="email" type="email" autocomplete="username" required autofocus data-testid=${LOGIN_TEST_IDS.loginEmail} />
        </div>
        <div class="field">
          <label for="password">Password</label>
          <input id="password" name="password" type="password" autocomplete="current-password" required data-testid=${LOGIN_TEST_IDS.loginPassword} />
        </div>
        ${this.error ? html`<berth-error-panel heading="Sign-in failed" .error=${this.error}></berth-error-panel>` : nothing}
        <button class="primary" type="submit" ?disabled=${this.busy} data-testid=${LOGIN_TEST_IDS.loginSubmit}>${this.busy ? "Signing in…" : "Sign in"}</button>
      </form>
      ${b.signup !== "closed" ? html`<p class="below">New here? <a href="/signup" data-testid=${LOGIN_TEST_IDS.signupLink}>Create an account</a>${b.signup === "approval" ? " (an administrator approves it)" : ""}</p>` : nothing}
    </div>`;
  }
}
