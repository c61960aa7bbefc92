import { css } from "lit";

export const styles = css`
  dialog {
    border: 1px solid var(--berth-border);
    border-radius: var(--berth-radius);
    background: var(--berth-bg);
    color: var(--berth-fg);
    padding: 1.25rem;
    width: min(28rem, calc(100vw - 2rem));
  }
  dialog::backdrop {
    background: rgb(0 0 0 / 0.45);
  }
  h2 {
    margin-top: 0;
  }
  .actions {
    display: flex;
    justify-content: flex-end;
    gap: 0.5rem;
    margin-top: 1rem;
  }
`;
