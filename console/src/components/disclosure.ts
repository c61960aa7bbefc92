// The header's disclosure menus (account, Admin) share their behaviour: `open` toggled by their button,
// closed by a click anywhere else or by Escape, which returns focus to the button (the disclosure pattern,
// not an ARIA menu: a short list of links needs no roving focus).
import { LitElement } from "lit";

export abstract class DisclosureElement extends LitElement {
  static override properties = { open: { type: Boolean, reflect: true } };
  declare open: boolean;
  /** The id of the button that toggles the panel, in the shadow root. */
  protected abstract readonly buttonId: string;

  constructor() {
    super();
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

  protected onKey(e: KeyboardEvent): void {
    if (e.key !== "Escape" || !this.open) return;
    this.open = false;
    this.renderRoot.querySelector<HTMLButtonElement>(`#${this.buttonId}`)?.focus();
  }
}
