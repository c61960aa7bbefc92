import { css } from "lit";

export const styles = css`
  :host {
    display: block;
    min-height: 100vh;
    background: var(--berth-bg-page);
  }
  .skip {
    position: absolute;
    left: -999px;
    top: 0;
    background: var(--berth-bg);
    padding: 0.5rem 1rem;
    z-index: 10;
  }
  .skip:focus {
    left: 0.5rem;
    top: 0.5rem;
  }
  header {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    gap: 0.5rem 0.75rem;
    padding: 0.5rem 1rem;
    background: var(--berth-bg);
    border-bottom: 1px solid var(--berth-border);
  }
  .brand {
    display: inline-flex;
    align-items: center;
    gap: 0.4rem;
    font-weight: 700;
    font-size: 1.1rem;
    color: var(--berth-accent);
    text-decoration: none;
  }
  nav {
    display: flex;
    flex-wrap: wrap;
    gap: 0.1rem;
  }
  /* Member pages, the Admin menu, the balance, the bell and the account share one line at 1280 px. */
  nav a {
    padding: 0.35rem 0.45rem;
    border-radius: var(--berth-radius);
    color: var(--berth-fg);
    text-decoration: none;
  }
  nav a:hover {
    background: var(--berth-bg-subtle);
  }
  nav a.active {
    background: var(--berth-bg-subtle);
    font-weight: 600;
    box-shadow: inset 0 -2px 0 var(--berth-accent);
  }
  /* A product name may be 64 characters long: it never takes more than its share of the header. */
  .brand span {
    white-space: nowrap;
    max-width: 14rem;
    overflow: hidden;
    text-overflow: ellipsis;
  }
  .brand img {
    object-fit: contain;
    border-radius: 3px;
  }
  footer {
    max-width: 80rem;
    margin: 0 auto;
    padding: 0 1.25rem 1.25rem;
    font-size: 0.9rem;
  }
  main {
    display: block;
    padding: 1.25rem;
    max-width: 80rem;
    margin: 0 auto;
  }
  main:focus {
    outline: none;
  }
  @media (max-width: 640px) {
    /* Brand, balance, live indicator, bell and account share one line at a phone's width. */
    header {
      padding: 0.5rem 0.5rem;
      gap: 0.5rem 0.4rem;
    }
    nav {
      order: 10;
      width: 100%;
      overflow-x: auto;
      flex-wrap: nowrap;
    }
    main {
      padding: 0.75rem;
    }
  }
`;
