// Layout pieces of the list and detail pages.
import { css } from "lit";

export const page = css`
  .page-head {
    display: flex;
    flex-wrap: wrap;
    gap: 0.75rem;
    align-items: center;
    margin-bottom: 1rem;
  }
  .page-head h1 {
    margin: 0;
  }
  .filters {
    display: flex;
    flex-wrap: wrap;
    gap: 0.75rem;
    align-items: end;
    margin-bottom: 0.75rem;
  }
  .filters .field {
    margin: 0;
    min-width: 10rem;
  }
  .grid2 {
    display: grid;
    grid-template-columns: repeat(auto-fit, minmax(18rem, 1fr));
    gap: 1rem;
  }
  .badge {
    display: inline-block;
    padding: 0.05rem 0.5rem;
    border-radius: 999px;
    font-size: 0.8rem;
    font-weight: 600;
    border: 1px solid currentColor;
    white-space: nowrap;
  }
  .tone-ok {
    color: var(--berth-ok);
  }
  .tone-warn {
    color: var(--berth-warn);
  }
  .tone-bad {
    color: var(--berth-danger);
  }
  .tone-muted {
    color: var(--berth-fg-muted);
  }
  .tone-info {
    color: var(--berth-accent);
  }
  .actions {
    display: flex;
    flex-wrap: wrap;
    gap: 0.35rem;
  }
  .success {
    border: 1px solid var(--berth-ok);
    border-left-width: 4px;
    border-radius: var(--berth-radius);
    padding: 0.75rem 1rem;
    margin: 0.5rem 0;
    background: var(--berth-bg);
  }
  /* A form's own refusal, before anything is sent. */
  .problem {
    color: var(--berth-danger);
    margin: 0.35rem 0;
  }
  textarea.secret {
    font-family: var(--berth-font-mono);
    font-size: 0.8rem;
    min-height: 5rem;
  }
  fieldset {
    border: 1px solid var(--berth-border);
    border-radius: var(--berth-radius);
    padding: 0.75rem 1rem;
    margin: 0 0 1rem;
  }
  legend {
    font-weight: 600;
    padding: 0 0.25rem;
  }
  .radio {
    display: flex;
    gap: 1rem;
    flex-wrap: wrap;
  }
  .radio label {
    display: inline-flex;
    gap: 0.35rem;
    align-items: center;
    font-weight: 400;
  }
  .radio input,
  .check input {
    width: auto;
    min-height: 0;
  }
  .check {
    display: flex;
    gap: 0.5rem;
    align-items: center;
  }
  .check label {
    margin: 0;
    font-weight: 400;
  }
  @media (max-width: 640px) {
    .filters .field {
      min-width: 100%;
    }
    .hide-narrow {
      display: none;
    }
  }
`;
