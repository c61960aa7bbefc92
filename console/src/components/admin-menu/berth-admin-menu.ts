// The header's administration pages behind one "Admin" button: the member pages stay one click away and
// the header keeps one line however many administration pages the platform grows. Opening and closing:
// disclosure.ts.
import { html } from "lit";
import { shared, tokens } from "../../styles/shared.ts";
import { SHELL_TEST_IDS } from "../../test-ids/shell.ts";
import { DisclosureElement } from "../disclosure.ts";
import { styles } from "./styles.ts";

export interface AdminLink {
  href: string;
  label: string;
  active: boolean;
}

export class BerthAdminMenu extends DisclosureElement {
  static override styles = [tokens, shared, styles];
  static override properties = { ...DisclosureElement.properties, links: { attribute: false } };
  declare links: AdminLink[];
  protected readonly buttonId = "admin-button";

  constructor() {
    super();
    this.links = [];
  }

  override render() {
    const here = this.links.find((l) => l.active);
    return html`<div class="wrap" @keydown=${(e: KeyboardEvent) => this.onKey(e)}>
      <button type="button" id="admin-button" class=${here ? "active" : ""} aria-expanded=${this.open ? "true" : "false"}
        aria-controls="admin-panel" data-testid=${SHELL_TEST_IDS.adminMenu} @click=${() => (this.open = !this.open)}>
        Admin${here ? html`<span class="here">: ${here.label}</span>` : ""}<span aria-hidden="true" class="caret">▾</span>
      </button>
      <ul id="admin-panel" class="panel" ?hidden=${!this.open} data-testid=${SHELL_TEST_IDS.adminPanel}>
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
