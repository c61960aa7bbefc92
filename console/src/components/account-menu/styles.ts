import { css } from "lit";

export const styles = css`
  :host {
    display: inline-block;
  }
  .wrap {
    position: relative;
  }
  .avatar {
    display: inline-grid;
    place-items: center;
    width: 2.25rem;
    height: 2.25rem;
    min-height: 0;
    padding: 0;
    border-radius: 50%;
    font-weight: 700;
    background: var(--berth-bg-subtle);
  }
  .avatar[aria-expanded="true"] {
    box-shadow: 0 0 0 2px var(--berth-accent);
  }
  .panel {
    position: absolute;
    right: 0;
    top: calc(100% + 0.4rem);
    z-index: 20;
    min-width: 14rem;
    max-width: min(22rem, calc(100vw - 1.5rem));
    padding: 0.75rem;
    background: var(--berth-bg);
    border: 1px solid var(--berth-border);
    border-radius: var(--berth-radius);
    box-shadow: 0 6px 24px rgb(0 0 0 / 0.15);
  }
  .panel[hidden] {
    display: none;
  }
  .signed-in {
    margin: 0 0 0.6rem;
    color: var(--berth-fg-muted);
    font-size: 0.9rem;
  }
  .email {
    display: block;
    color: var(--berth-fg);
    font-weight: 600;
    overflow-wrap: anywhere;
  }
  .item {
    display: block;
    margin: 0 0 0.6rem;
  }
`;
