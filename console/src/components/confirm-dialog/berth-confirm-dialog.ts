// A modal confirmation on the native <dialog> (focus trapped, Escape cancels, focus returns to the
// button that opened it). confirmAction() opens one and resolves with the user's answer.
import { html, LitElement } from "lit";
import { shared, tokens } from "../../styles/shared.ts";
import { SHELL_TEST_IDS } from "../../test-ids/shell.ts";
import { styles } from "./styles.ts";

export interface ConfirmOptions {
  heading: string;
  body: string;
  confirmLabel: string;
  /** The action destroys something: the confirm button is red and not focused first. */
  danger?: boolean;
}

export class BerthConfirmDialog extends LitElement {
  static override styles = [tokens, shared, styles];
  static override properties = {
    heading: { type: String },
    body: { type: String },
    confirmLabel: { type: String, attribute: "confirm-label" },
    danger: { type: Boolean },
  };
  declare heading: string;
  declare body: string;
  declare confirmLabel: string;
  declare danger: boolean;

  constructor() {
    super();
    this.heading = "Are you sure?";
    this.body = "";
    this.confirmLabel = "Confirm";
    this.danger = false;
  }

  get #dialog(): HTMLDialogElement | null {
    return this.renderRoot.querySelector("dialog");
  }

  async show(): Promise<void> {
    await this.updateComplete;
    this.#dialog?.showModal();
  }

  #answer(ok: boolean): void {
    this.#dialog?.close();
    this.dispatchEvent(new CustomEvent(ok ? "berth-confirm" : "berth-cancel", { bubbles: true, composed: true }));
  }

  override render() {
    return html`<dialog aria-labelledby="h" aria-describedby="b" data-testid=${SHELL_TEST_IDS.confirmDialog} @cancel=${(
      e: Event,
    ) => {
      e.preventDefault();
      this.#answer(false);
    }}>
      <h2 id="h">${this.heading}</h2>
      <p id="b">${this.body}</p>
      <div class="actions">
        <button type="button" ?autofocus=${this.danger} data-testid=${SHELL_TEST_IDS.confirmCancel} @click=${() => this.#answer(false)}>Cancel</button>
        <button type="button" class=${this.danger ? "danger" : "primary"} ?autofocus=${!this.danger} data-testid=${SHELL_TEST_IDS.confirmOk} @click=${() => this.#answer(true)}>${this.confirmLabel}</button>
      </div>
    </dialog>`;
  }
}

/** Opens a confirmation and resolves true when the user confirms. */
export function confirmAction(opts: ConfirmOptions): Promise<boolean> {
  const el = document.createElement("berth-confirm-dialog") as BerthConfirmDialog;
  el.heading = opts.heading;
  el.body = opts.body;
  el.confirmLabel = opts.confirmLabel;
  el.danger = !!opts.danger;
  const opener = document.activeElement instanceof HTMLElement ? document.activeElement : undefined;
  document.body.append(el);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      el.remove();
      opener?.focus?.();
      resolve(ok);
    };
    el.addEventListener("berth-confirm", () => done(true), { once: true });
    el.addEventListener("berth-cancel", () => done(false), { once: true });
    void el.show();
  });
}
