import { css } from "lit";

export const styles = css`
  .grid2 {
    margin-bottom: 1rem;
  }
  section.card,
  details.card {
    margin-bottom: 1rem;
  }
  .queue,
  .warning {
    border-left: 4px solid var(--berth-warn);
    margin-bottom: 1rem;
  }
  .warning button {
    margin-left: 0.5rem;
  }
  ol.timeline {
    list-style: none;
    padding: 0;
    margin: 0;
    border-left: 2px solid var(--berth-border);
  }
  ol.timeline li {
    position: relative;
    padding: 0.25rem 0 0.6rem 1rem;
    display: flex;
    flex-wrap: wrap;
    gap: 0.15rem 0.6rem;
    color: var(--berth-fg);
  }
  ol.timeline li::before {
    content: "";
    position: absolute;
    left: -0.4rem;
    top: 0.55rem;
    width: 0.65rem;
    height: 0.65rem;
    border-radius: 50%;
    background: currentColor;
  }
  ol.timeline li.tone-ok::before {
    background: var(--berth-ok);
  }
  ol.timeline li.tone-warn::before {
    background: var(--berth-warn);
  }
  ol.timeline li.tone-bad::before {
    background: var(--berth-danger);
  }
  ol.timeline li.tone-info::before {
    background: var(--berth-accent);
  }
  ol.timeline time {
    color: var(--berth-fg-muted);
    font-size: 0.85rem;
    min-width: 5.5rem;
  }
  .what {
    font-weight: 600;
  }
  .why {
    flex-basis: 100%;
    color: var(--berth-fg-muted);
    font-size: 0.9rem;
  }
  pre.yaml {
    font-family: var(--berth-font-mono);
    font-size: 0.8rem;
    background: var(--berth-bg-subtle);
    padding: 0.75rem;
    border-radius: var(--berth-radius);
    max-height: 24rem;
    overflow: auto;
  }
  summary {
    cursor: pointer;
    font-weight: 600;
  }
`;
