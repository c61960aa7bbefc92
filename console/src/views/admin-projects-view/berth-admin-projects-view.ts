import { html, LitElement } from "lit";
import { shared, tokens } from "../../styles/shared.ts";

export class BerthAdminProjectsView extends LitElement {
  static override styles = [tokens, shared];
  static override properties = {
    query: { attribute: false },
    sessionId: { type: String },
    clusterId: { type: String },
  };
  override render() {
    return html`<h1>Projects</h1><p>Coming soon.</p>`;
  }
}
