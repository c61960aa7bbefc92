// Page navigation for the API's paged lists ({page, size, total}); fires berth-page-change.
import { css, html, LitElement } from "lit";
import { pageCount } from "../../data/paging.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { SHELL_TEST_IDS } from "../../test-ids/shell.ts";

export interface PageChange {
  page: number;
}

export class BerthPager extends LitElement {
  static override styles = [
    tokens,
    shared,
    css`
      nav {
        display: flex;
        gap: 0.5rem;
        align-items: center;
        justify-content: flex-end;
        margin-top: 0.75rem;
        flex-wrap: wrap;
      }
    `,
  ];
  static override properties = { page: { type: Number }, size: { type: Number }, total: { type: Number } };
  declare page: number;
  declare size: number;
  declare total: number;
  constructor() {
    super();
    this.page = 1;
    this.size = 20;
    this.total = 0;
  }
  #go(page: number): void {
    this.dispatchEvent(
      new CustomEvent<PageChange>("berth-page-change", { detail: { page }, bubbles: true, composed: true }),
    );
  }
  override render() {
    const pages = pageCount(this.total, this.size);
    if (pages <= 1) return html`<nav aria-label="Pages"><span class="muted">${this.total} in total</span></nav>`;
    return html`<nav aria-label="Pages">
      <span class="muted" data-testid=${SHELL_TEST_IDS.pagerStatus}>Page ${this.page} of ${pages} · ${this.total} in total</span>
      <button type="button" ?disabled=${this.page <= 1} @click=${() => this.#go(this.page - 1)} data-testid=${SHELL_TEST_IDS.pagerPrev}>Previous</button>
      <button type="button" ?disabled=${this.page >= pages} @click=${() => this.#go(this.page + 1)} data-testid=${SHELL_TEST_IDS.pagerNext}>Next</button>
    </nav>`;
  }
}
