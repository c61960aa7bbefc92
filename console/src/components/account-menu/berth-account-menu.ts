// The header's account: a round button with the person's initial that discloses their email and Sign out
// (the disclosure pattern, not an ARIA menu: two items need no roving focus). The email would take 16rem
// of the header. Escape or a click elsewhere closes it; Escape returns focus to the button.
import { html, LitElement } from "lit";
import { shared, tokens } from "../../styles/shared.ts";
import { styles } from "./styles.ts";

export class BerthAccountMenu extends LitElement {
  static override styles = [tokens, shared, styles];
  static override properties = { email: { type: String }, open: { type: Boolean, reflect: true } };
  declare email: string;
  declare open: boolean;

  constructor() {
    super();
    this.email = "";
    this.open = false;
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
        <button type="button" data-testid="sign-out" @click=${this.#signOut}>Sign out</button>
      </div>
    </div>`;
  }
}
