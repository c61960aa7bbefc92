// The probe's result check by check: passed, failed (with what to do) or not run.
import { css, html, LitElement, nothing } from "lit";
import type { ClusterChecks } from "../../api/openapi.gen.ts";
import { checkLines } from "../../data/clusters.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { CLUSTERS_TEST_IDS } from "../../test-ids/clusters.ts";

export class BerthCheckList extends LitElement {
  static override styles = [
    tokens,
    shared,
    css`
      ul {
        list-style: none;
        padding: 0;
        margin: 0.5rem 0;
      }
      li {
        display: grid;
        grid-template-columns: 1.5rem 1fr;
        gap: 0.25rem 0.5rem;
        padding: 0.4rem 0;
        border-bottom: 1px solid var(--berth-border);
      }
      li:last-child {
        border-bottom: 0;
      }
      .mark {
        font-weight: 700;
      }
      .ok .mark {
        color: var(--berth-ok);
      }
      .fail .mark {
        color: var(--berth-danger);
      }
      .skip .mark {
        color: var(--berth-fg-muted);
      }
      .fix {
        grid-column: 2;
        color: var(--berth-fg-muted);
        font-size: 0.9rem;
        margin: 0;
      }
    `,
  ];
  static override properties = { checks: { attribute: false } };
  declare checks: Partial<ClusterChecks> | undefined;
  constructor() {
    super();
    this.checks = undefined;
  }
  override render() {
    return html`<ul aria-label="Checks" data-testid=${CLUSTERS_TEST_IDS.checkList}>
      ${checkLines(this.checks).map((l) => {
        const cls = l.ok === true ? "ok" : l.ok === false ? "fail" : "skip";
        const word = l.ok === true ? "passed" : l.ok === false ? "failed" : "not run";
        return html`<li class=${cls} data-testid=${CLUSTERS_TEST_IDS.check(l.key)} data-result=${word}>
          <span class="mark" aria-hidden="true">${l.ok === true ? "✓" : l.ok === false ? "✗" : "–"}</span>
          <span>${l.label} <span class="visually-hidden">: ${word}</span>${l.ok === undefined ? html` <span class="muted">(not run)</span>` : nothing}</span>
          ${l.ok === false ? html`<p class="fix">${l.fix}</p>` : nothing}
        </li>`;
      })}
    </ul>`;
  }
}
