// Shows a failure the way every page does: the API's message, what to do about it, and the request id
// to quote to an administrator. Never a blank screen.
import { html, LitElement, nothing } from "lit";
import { ApiError } from "../../api/client.ts";
import { adviceFor } from "../../data/errors.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { SHELL_TEST_IDS } from "../../test-ids/shell.ts";
import { styles } from "./styles.ts";

export class BerthErrorPanel extends LitElement {
  static override styles = [tokens, shared, styles];
  static override properties = {
    error: { attribute: false },
    heading: { type: String },
    retryable: { type: Boolean },
  };
  declare error: unknown;
  declare heading: string;
  declare retryable: boolean;

  constructor() {
    super();
    this.error = undefined;
    this.heading = "Something went wrong";
    this.retryable = false;
  }

  #retry(): void {
    this.dispatchEvent(new CustomEvent("berth-retry", { bubbles: true, composed: true }));
  }

  override render() {
    const e = this.error;
    const api = e instanceof ApiError ? e : undefined;
    const message = api?.message ?? (e instanceof Error ? e.message : String(e ?? "Unknown error"));
    const advice = api ? adviceFor(api) : [];
    return html`<div class="panel" role="alert" data-testid=${SHELL_TEST_IDS.errorPanel} data-code=${api?.code ?? "client"}>
      <p class="heading">${this.heading}</p>
      <p class="message" data-testid=${SHELL_TEST_IDS.errorMessage}>${message}</p>
      ${advice.length ? html`<ul class="advice">${advice.map((a) => html`<li>${a}</li>`)}</ul>` : nothing}
      <p class="meta">
        ${api?.code ? html`<span>Code <code>${api.code}</code></span>` : nothing}
        ${api?.requestId ? html`<span>Request id <code data-testid=${SHELL_TEST_IDS.errorRequestId}>${api.requestId}</code></span>` : nothing}
      </p>
      ${this.retryable ? html`<button type="button" @click=${this.#retry}>Try again</button>` : nothing}
    </div>`;
  }
}
