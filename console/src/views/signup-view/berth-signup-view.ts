// Sign-up, as the system's policy allows (docs/dev/governance.md): closed says so; open makes an account to
// sign in with at once; approval makes one an administrator approves first. The API decides (allowed
// domains, an email in use, throttling) and its envelope explains a refusal.
import { html, LitElement, nothing } from "lit";
import { branding } from "../../app/context.ts";
import "../../components/error-panel/index.ts";
import { signUp } from "../../app/account.ts";
import { MIN_PASSWORD_LENGTH } from "../../data/password.ts";
import { authCard } from "../../styles/forms.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { SETTINGS_TEST_IDS } from "../../test-ids/settings.ts";

export class BerthSignupView extends LitElement {
  static override styles = [tokens, shared, authCard];
  static override properties = {
    busy: { state: true },
    error: { state: true },
    problem: { state: true },
    done: { state: true },
  };
  declare busy: boolean;
  declare error: unknown;
  declare problem: string | undefined;
  declare done: "active" | "pending_approval" | undefined;

  constructor() {
    super();
    this.busy = false;
    this.error = undefined;
    this.problem = undefined;
    this.done = undefined;
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

  async #submit(e: SubmitEvent): Promise<void> {
    e.preventDefault();
    const f = new FormData(e.target as HTMLFormElement);
    const password = String(f.get("password") ?? "");
    const repeat = String(f.get("repeat") ?? "");
    this.error = undefined;
    this.problem =
      password.length < MIN_PASSWORD_LENGTH
        ? `The password needs at least ${MIN_PASSWORD_LENGTH} characters.`
        : password !== repeat
          ? "The two passwords do not match."
          : undefined;
    if (this.problem) return;
    this.busy = true;
    try {
      const name = String(f.get("display_name") ?? "").trim();
      const r = await signUp({
        email: String(f.get("email") ?? "").trim(),
        password,
        ...(name ? { display_name: name } : {}),
      });
      this.done = r.status;
    } catch (err) {
      this.error = err;
    } finally {
      this.busy = false;
    }
  }

  override render() {
    const b = branding.current;
    if (this.done)
      return html`<div class="auth"><h1>Account created</h1>
        <p class="notice" role="status" data-testid=${SETTINGS_TEST_IDS.signupDone} data-status=${this.done}>${
          this.done === "active"
            ? html`Your account is ready. <a href="/login">Sign in</a>.`
            : "An administrator approves new accounts. You can sign in once yours is approved."
        }</p></div>`;
    return html`<div class="auth">
      <h1>Create your ${b.product_name} account</h1>
      ${
        b.signup === "closed"
          ? html`<p class="notice" role="status" data-testid=${SETTINGS_TEST_IDS.signupClosed}>Sign-up is closed: ask an administrator for an account.</p>`
          : b.signup === "approval"
            ? html`<p class="notice">An administrator approves each new account before it can sign in.</p>`
            : nothing
      }
      <form class="card" @submit=${this.#submit} data-testid=${SETTINGS_TEST_IDS.signupForm} novalidate>
        <div class="field">
          <label for="s-email">Email</label>
          <input id="s-email" name="email" type="email" autocomplete="username" required autofocus />
        </div>
        <div class="field">
          <label for="s-name">Your name (optional)</label>
          <input id="s-name" name="display_name" type="text" autocomplete="name" maxlength="128" />
        </div>
        <div class="field">
          <label for="s-password">Password</label>
          <input id="s-password" name="password" type="password" autocomplete="new-password" required minlength="12" aria-describedby="s-hint" />
          <p class="hint" id="s-hint">At least ${MIN_PASSWORD_LENGTH} characters.</p>
        </div>
        <div class="field">
          <label for="s-repeat">Password again</label>
          <input id="s-repeat" name="repeat" type="password" autocomplete="new-password" required />
        </div>
        ${this.problem ? html`<p role="alert" class="problem" data-testid=${SETTINGS_TEST_IDS.signupProblem}>${this.problem}</p>` : nothing}
        ${this.error ? html`<berth-error-panel heading="No account was made" .error=${this.error}></berth-error-panel>` : nothing}
        <button class="primary" type="submit" ?disabled=${this.busy} data-testid=${SETTINGS_TEST_IDS.signupSubmit}>${this.busy ? "Creating…" : "Create account"}</button>
      </form>
      <p class="below">Have an account? <a href="/login">Sign in</a></p>
    </div>`;
  }
}
