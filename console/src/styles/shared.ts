// Styles every component adopts: tokens, controls, tables and a focus ring that is always visible for
// keyboard users. System fonts only (no web-font download); colours meet WCAG AA contrast.
import { css } from "lit";

export const tokens = css`
  :host {
    --berth-fg: #1b1f24;
    --berth-fg-muted: #505a66;
    --berth-bg: #ffffff;
    --berth-bg-page: #f6f7f9;
    --berth-bg-subtle: #eef1f5;
    --berth-border: #c9d0d9;
    /* The product's accent (app/branding.ts); choose one that keeps 4.5:1 on white for links. */
    --berth-accent: var(--berth-brand-accent, #1f56c9);
    --berth-accent-fg: var(--berth-brand-accent-fg, #ffffff);
    --berth-danger: #b3261e;
    --berth-warn: #8a5300;
    --berth-ok: #1d6b36;
    --berth-focus: #f0a500;
    --berth-radius: 6px;
    --berth-font-mono: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace;
    font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif;
    color: var(--berth-fg);
    box-sizing: border-box;
  }
  @media (prefers-color-scheme: dark) {
    :host {
      --berth-fg: #e6e8eb;
      --berth-fg-muted: #a9b3bf;
      --berth-bg: #1c2025;
      --berth-bg-page: #14171b;
      --berth-bg-subtle: #252a31;
      --berth-border: #3a424d;
      --berth-accent: #7aa7ff;
      --berth-accent-fg: #0b1220;
      --berth-danger: #ff8a80;
      --berth-warn: #f5c16c;
      --berth-ok: #7bd88f;
    }
  }
`;

export const shared = css`
  *,
  *::before,
  *::after {
    box-sizing: border-box;
  }
  :focus-visible {
    outline: 3px solid var(--berth-focus);
    outline-offset: 2px;
    border-radius: 3px;
  }
  h1 {
    font-size: 1.4rem;
    margin: 0 0 1rem;
  }
  h2 {
    font-size: 1.1rem;
    margin: 1.5rem 0 0.5rem;
  }
  a {
    color: var(--berth-accent);
  }
  .card > h2:first-child,
  .card > h1:first-child {
    margin-top: 0;
  }
  button,
  .button {
    font: inherit;
    font-size: 0.95rem;
    display: inline-flex;
    align-items: center;
    gap: 0.35rem;
    min-height: 2.25rem;
    padding: 0.35rem 0.9rem;
    border-radius: var(--berth-radius);
    border: 1px solid var(--berth-border);
    background: var(--berth-bg);
    color: var(--berth-fg);
    cursor: pointer;
    text-decoration: none;
  }
  button:hover:not(:disabled),
  .button:hover {
    background: var(--berth-bg-subtle);
  }
  button.primary,
  .button.primary {
    background: var(--berth-accent);
    border-color: var(--berth-accent);
    color: var(--berth-accent-fg);
  }
  button.primary:hover:not(:disabled) {
    filter: brightness(1.08);
    background: var(--berth-accent);
  }
  button.danger {
    color: var(--berth-danger);
    border-color: var(--berth-danger);
  }
  button:disabled {
    opacity: 0.55;
    cursor: not-allowed;
  }
  label {
    display: block;
    font-weight: 600;
    font-size: 0.9rem;
    margin-bottom: 0.25rem;
  }
  input,
  select,
  textarea {
    font: inherit;
    width: 100%;
    min-height: 2.25rem;
    padding: 0.35rem 0.6rem;
    border: 1px solid var(--berth-border);
    border-radius: var(--berth-radius);
    background: var(--berth-bg);
    color: var(--berth-fg);
  }
  .field {
    margin-bottom: 1rem;
  }
  .hint {
    color: var(--berth-fg-muted);
    font-size: 0.85rem;
    margin: 0.25rem 0 0;
  }
  .muted {
    color: var(--berth-fg-muted);
  }
  .card {
    background: var(--berth-bg);
    border: 1px solid var(--berth-border);
    border-radius: var(--berth-radius);
    padding: 1rem;
  }
  .row {
    display: flex;
    flex-wrap: wrap;
    gap: 0.5rem;
    align-items: center;
  }
  .spacer {
    flex: 1;
  }
  .table-wrap {
    overflow-x: auto;
    background: var(--berth-bg);
    border: 1px solid var(--berth-border);
    border-radius: var(--berth-radius);
  }
  table {
    border-collapse: collapse;
    width: 100%;
    font-size: 0.92rem;
  }
  th,
  td {
    text-align: left;
    padding: 0.5rem 0.75rem;
    border-bottom: 1px solid var(--berth-border);
    vertical-align: top;
  }
  th {
    background: var(--berth-bg-subtle);
    font-weight: 600;
    white-space: nowrap;
  }
  tr:last-child td {
    border-bottom: 0;
  }
  code,
  .mono {
    font-family: var(--berth-font-mono);
    font-size: 0.88em;
  }
  .visually-hidden {
    position: absolute;
    width: 1px;
    height: 1px;
    overflow: hidden;
    clip: rect(0 0 0 0);
    white-space: nowrap;
  }
  dl.facts {
    display: grid;
    grid-template-columns: max-content 1fr;
    gap: 0.35rem 1rem;
    margin: 0;
  }
  dl.facts dt {
    color: var(--berth-fg-muted);
  }
  dl.facts dd {
    margin: 0;
    overflow-wrap: anywhere;
  }
  @media (max-width: 640px) {
    dl.facts {
      grid-template-columns: 1fr;
    }
    dl.facts dd {
      margin-bottom: 0.5rem;
    }
  }
`;
