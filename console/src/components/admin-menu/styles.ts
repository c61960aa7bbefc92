import { css } from "lit";

export const styles = css`
  :host {
    display: inline-block;
  }
  .wrap {
    position: relative;
  }
  button {
    padding: 0.35rem 0.45rem;
    min-height: 0;
    border: none;
    background: none;
    color: var(--berth-fg);
    font: inherit;
  }
  button:hover,
  button[aria-expanded="true"] {
    background: var(--berth-bg-subtle);
  }
  button.active {
    background: var(--berth-bg-subtle);
    font-weight: 600;
    box-shadow: inset 0 -2px 0 var(--berth-accent);
  }
  .caret {
    margin-left: 0.25rem;
    font-size: 0.8em;
  }
  .panel {
    position: absolute;
    left: 0;
    top: calc(100% + 0.4rem);
    z-index: 20;
    min-width: 12rem;
    margin: 0;
    padding: 0.35rem;
    list-style: none;
    background: var(--berth-bg);
    border: 1px solid var(--berth-border);
    border-radius: var(--berth-radius);
    box-shadow: 0 6px 24px rgb(0 0 0 / 0.15);
  }
  .panel[hidden] {
    display: none;
  }
  .panel a {
    display: block;
    padding: 0.4rem 0.6rem;
    border-radius: var(--berth-radius);
    color: var(--berth-fg);
    text-decoration: none;
  }
  .panel a:hover,
  .panel a.active {
    background: var(--berth-bg-subtle);
  }
  .panel a.active {
    font-weight: 600;
  }
  @media (max-width: 640px) {
    .here {
      display: none;
    }
    .panel {
      position: fixed;
      left: 0.5rem;
      right: 0.5rem;
      top: auto;
    }
  }
`;
