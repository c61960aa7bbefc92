import { css } from "lit";

export const styles = css`
  .choices {
    display: grid;
    grid-template-columns: repeat(auto-fill, minmax(15rem, 1fr));
    gap: 0.75rem;
  }
  .choice {
    display: flex;
    gap: 0.6rem;
    align-items: flex-start;
    font-weight: 400;
    border: 1px solid var(--berth-border);
    border-radius: var(--berth-radius);
    padding: 0.75rem;
    background: var(--berth-bg);
    cursor: pointer;
    margin: 0;
  }
  .choice:has(input:checked) {
    border-color: var(--berth-accent);
    box-shadow: 0 0 0 1px var(--berth-accent);
  }
  .choice input {
    width: auto;
    min-height: 0;
    margin-top: 0.2rem;
  }
  .choice-body {
    display: flex;
    flex-direction: column;
    gap: 0.15rem;
    min-width: 0;
    overflow-wrap: anywhere;
  }
  .cost {
    font-size: 1.05rem;
  }
  .refusal {
    border: 1px solid var(--berth-warn);
    border-left-width: 4px;
    border-radius: var(--berth-radius);
    padding: 0.5rem 0.9rem;
    background: var(--berth-bg);
  }
  .refusal p {
    margin: 0.4rem 0;
  }
  .refusal-message {
    font-size: 0.9rem;
    overflow-wrap: anywhere;
  }
`;
