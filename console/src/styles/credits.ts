// Pieces of the credits pages: their tab row, amounts that line up, and the decide/allocate cards.
import { css } from "lit";

export const credits = css`
  nav.subnav {
    display: flex;
    flex-wrap: wrap;
    gap: 0.25rem;
    border-bottom: 1px solid var(--berth-border);
    margin: -0.25rem 0 1rem;
  }
  nav.subnav a {
    padding: 0.4rem 0.75rem;
    color: var(--berth-fg);
    text-decoration: none;
    border-radius: var(--berth-radius) var(--berth-radius) 0 0;
  }
  nav.subnav a:hover {
    background: var(--berth-bg-subtle);
  }
  nav.subnav a[aria-current="page"] {
    font-weight: 600;
    box-shadow: inset 0 -3px 0 var(--berth-accent);
  }
  .num {
    text-align: right;
    font-variant-numeric: tabular-nums;
    white-space: nowrap;
  }
  .negative {
    color: var(--berth-danger);
  }
  .positive {
    color: var(--berth-ok);
  }
  .balance-big {
    font-size: 1.8rem;
    font-weight: 700;
    font-variant-numeric: tabular-nums;
    margin: 0;
  }
  .form-grid {
    display: grid;
    grid-template-columns: repeat(auto-fit, minmax(14rem, 1fr));
    gap: 0 1rem;
  }
  .field.wide {
    grid-column: 1 / -1;
  }
  .problem {
    color: var(--berth-danger);
    font-size: 0.85rem;
    margin: 0.25rem 0 0;
  }
  section.card {
    margin-bottom: 1rem;
  }
  textarea {
    min-height: 4rem;
    resize: vertical;
  }
  td.reason {
    min-width: 12rem;
    max-width: 28rem;
    overflow-wrap: anywhere;
  }
`;
