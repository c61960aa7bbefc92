import { css } from "lit";

export const styles = css`
  .panel {
    border: 1px solid var(--berth-danger);
    border-left-width: 4px;
    border-radius: var(--berth-radius);
    background: var(--berth-bg);
    padding: 0.75rem 1rem;
    margin: 0.5rem 0;
  }
  .heading {
    font-weight: 700;
    color: var(--berth-danger);
    margin: 0 0 0.25rem;
  }
  .message {
    margin: 0 0 0.5rem;
  }
  .advice {
    margin: 0 0 0.5rem;
    padding-left: 1.2rem;
  }
  .meta {
    display: flex;
    flex-wrap: wrap;
    gap: 1rem;
    font-size: 0.85rem;
    color: var(--berth-fg-muted);
    margin: 0 0 0.5rem;
  }
  code {
    user-select: all;
  }
`;
