import { css } from "lit";

/** A checkbox or radio beside its words (the shared form styles give inputs a full line). */
export const checks = css`
  label.check {
    display: inline-flex;
    align-items: center;
    gap: 0.5rem;
    font-weight: 400;
    margin: 0 1rem 0.25rem 0;
  }
  label.check input {
    width: auto;
    min-height: 0;
    margin: 0;
  }
`;
