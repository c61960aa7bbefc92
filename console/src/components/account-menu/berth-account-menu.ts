// The header's account: a round button with the person's initial that discloses their email, the system
// settings for super_admins, and Sign out
// (the disclosure pattern, not an ARIA menu: two items need no roving focus). The email no longer takes
// 16rem of the header, so an admin's seven links, the balance and the indicator fit on one line at
// 1280 px. Escape or a click elsewhere closes it; Escape returns focus to the button.
import { html, LitElement, nothing } from "lit";
import { shared, tokens } from "../../styles/shared.ts";
import { styles } from "./styles.ts";

export class BerthAccountMenu extends LitElement {
  static override styles = [tokens, shared, styles];
  static override properties = {
    email: { type: String },
    open: { type: Boolean, reflect: true },
    settings: { type: Boolean },
  };
  declare email: string;
  declare open: boolean;
  /** Offers the system settings (super_admins): the header has no room for one more page. */
  declare settings: boolean;

  constructor() {
    super();
    this.email = "";
    this.open = false;
    this.settings = false;
  }

  #outside = (e: Event) => {
    if (this.open && !e.composedPath().includes(this)) this.open = false;
  };

  override connectedCallback(): void {
    super.connectedCallback();
    document.addEventListener("click", this.#outside);
  }
  override disconnectedCallback(): void {
    super.disconnectedCallback();
    document.removeEventListener("click", this.#outside);
  }

  #onKey(e: KeyboardEvent): void {
    if (e.key !== "Escape" || !this.open) return;
    this.open = false;
    this.renderRoot.querySelector<HTMLButtonElement>("#account-button")?.focus();
  }

  #signOut(): void {
    this.open = false;
    this.dispatchEvent(new CustomEvent("berth-sign-out", { bubbles: true, composed: true }));
  }

  override render() {
    const initial = (this.email.trim()[0] ?? "?").toUpperCase();
    return html`<div class="wrap" @keydown=${this.#onKey}>
      <button type="button" id="account-button" class="avatar" aria-expanded=${this.open ? "true" : "false"}
        aria-controls="account-panel" aria-label="Account: ${this.email}" title=${this.email}
        data-testid="account-menu" @click=${() => (this.open = !this.open)}>
        <span aria-hidden="true">${initial}</span>
      </button>
      <div id="account-panel" class="panel" ?hidden=${!this.open} data-testid="account-panel">
        <p class="signed-in">Signed in as <span class="email" data-testid="account-email">${this.email}</span></p>
        ${this.settings ? html`<a class="item" href="/admin/settings" data-testid="system-settings" @click=${() => (this.open = false)}>System settings</a>` : nothing}
        <button type="button" data-testid="sign-out" @click=${this.#signOut}>Sign out</button>
      </div>
    </div>`;
  }
}
