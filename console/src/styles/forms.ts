// The narrow centred card of the sign-in and password pages.
import { css } from "lit";

export const authCard = css`
  .auth {
    max-width: 24rem;
    margin: 3rem auto;
  }
  .auth .card {
    padding: 1.5rem;
  }
  .auth-logo {
    display: block;
    max-height: 3rem;
    max-width: 12rem;
    margin: 0 0 1rem;
    object-fit: contain;
  }
  .below {
    margin: 1rem 0 0;
  }
  .notice {
    border-left: 4px solid var(--berth-accent);
    background: var(--berth-bg-subtle);
    padding: 0.5rem 0.75rem;
    margin: 0 0 1rem;
    border-radius: var(--berth-radius);
  }
  button.primary {
    width: 100%;
    justify-content: center;
  }
  @media (max-width: 640px) {
    .auth {
      margin: 1rem auto;
    }
  }
`;
