// The header's account: a round button with the person's initial that discloses their email and Sign out
// (the email itself would take 16rem of the header). Opening and closing: disclosure.ts.
import { html } from "lit";
import { shared, tokens } from "../../styles/shared.ts";
import { SHELL_TEST_IDS } from "../../test-ids/shell.ts";
import { DisclosureElement } from "../disclosure.ts";
import { styles } from "./styles.ts";

export class BerthAccountMenu extends DisclosureElement {
  static override styles = [tokens, shared, styles];
  static override properties = { ...DisclosureElement.properties, email: { type: String } };
  declare email: string;
  protected readonly buttonId = "account-button";

  constructor() {
    super();
    this.email = "";
  }

  #signOut(): void {
    this.open = false;
    this.dispatchEvent(new CustomEvent("berth-sign-out", { bubbles: true, composed: true }));
  }

  override render() {
    const initial = (this.email.trim()[0] ?? "?").toUpperCase();
    return html`<div class="wrap" @keydown=${(e: KeyboardEvent) => this.onKey(e)}>
      <button type="button" id="account-button" class="avatar" aria-expanded=${this.open ? "true" : "false"}
        aria-controls="account-panel" aria-label="Account: ${this.email}" title=${this.email}
        data-testid=${SHELL_TEST_IDS.accountMenu} @click=${() => (this.open = !this.open)}>
        <span aria-hidden="true">${initial}</span>
      </button>
      <div id="account-panel" class="panel" ?hidden=${!this.open} data-testid=${SHELL_TEST_IDS.accountPanel}>
        <p class="signed-in">Signed in as <span class="email" data-testid=${SHELL_TEST_IDS.accountEmail}>${this.email}</span></p>
        <button type="button" data-testid=${SHELL_TEST_IDS.signOut} @click=${this.#signOut}>Sign out</button>
      </div>
    </div>`;
  }
}
