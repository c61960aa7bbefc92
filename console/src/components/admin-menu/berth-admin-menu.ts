// The header's administration pages behind one "Admin" button (the disclosure pattern, like the account
// menu): the member pages stay one click away and the header keeps one line however many administration
// pages the platform grows. Escape or a click elsewhere closes it; Escape returns focus to the button.
import { html, LitElement } from "lit";
import { shared, tokens } from "../../styles/shared.ts";
import { styles } from "./styles.ts";

export interface AdminLink {
  href: string;
  label: string;
  active: boolean;
}

export class BerthAdminMenu extends LitElement {
  static override styles = [tokens, shared, styles];
  static override properties = { links: { attribute: false }, open: { type: Boolean, reflect: true } };
  declare links: AdminLink[];
  declare open: boolean;

  constructor() {
    super();
    this.links = [];
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
    this.renderRoot.querySelector<HTMLButtonElement>("#admin-button")?.focus();
  }

  override render() {
    const here = this.links.find((l) => l.active);
    return html`<div class="wrap" @keydown=${this.#onKey}>
      <button type="button" id="admin-button" class=${here ? "active" : ""} aria-expanded=${this.open ? "true" : "false"}
        aria-controls="admin-panel" data-testid="admin-menu" @click=${() => (this.open = !this.open)}>
        Admin${here ? html`<span class="here">: ${here.label}</span>` : ""}<span aria-hidden="true" class="caret">▾</span>
      </button>
      <ul id="admin-panel" class="panel" ?hidden=${!this.open} data-testid="admin-panel">
        ${this.links.map(
          (
            l,
          ) => html`<li><a href=${l.href} aria-current=${l.active ? "page" : "false"} class=${l.active ? "active" : ""}
            @click=${() => (this.open = false)}>${l.label}</a></li>`,
        )}
      </ul>
    </div>`;
  }
}
