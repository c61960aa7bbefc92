import { html, LitElement } from "lit";
import { shared, tokens } from "../../styles/shared.ts";

export class BerthNotFoundView extends LitElement {
  static override styles = [tokens, shared];
  override render() {
    return html`<h1>Page not found</h1>
      <p>There is no page at <code>${location.pathname}</code>.</p>
      <p><a href="/sessions">Go to your sessions</a></p>`;
  }
}
