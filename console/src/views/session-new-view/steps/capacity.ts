// Step 7: the capacity class (docs/dev/fair-share.md). Guaranteed is the default and never reclaimed;
// borrowed is the person's opt-in to idle capacity beyond their guarantee, at the offering's borrowed rate,
// with the warning and protection it runs under spelled out before launch (from the cost preview).
import type { Task } from "@lit/task";
import { html, nothing } from "lit";
import { formatCredits } from "../../../data/format.ts";
import { NEW_SESSION_TEST_IDS } from "../../../test-ids/new-session.ts";
import type { Previewed } from "./types.ts";

export type CapacityChoice = "guaranteed" | "borrowed";

export interface CapacityStepProps {
  choice: CapacityChoice;
  preview: Task<readonly unknown[], Previewed | undefined>;
  onPick: (c: CapacityChoice) => void;
}

const seconds = (s: number) => (s === 0 ? "no warning" : s < 120 ? `${s} seconds` : `${Math.round(s / 60)} minutes`);

export function capacityStep(p: CapacityStepProps) {
  const c = p.preview.value;
  const terms = c?.capacity_class === "borrowed" ? c.reclaim_terms : null;
  return html`<fieldset data-testid=${NEW_SESSION_TEST_IDS.capacity}>
      <legend>7. Capacity</legend>
      <label class="check"><input type="radio" name="capacity" value="guaranteed" .checked=${p.choice === "guaranteed"}
        @change=${() => p.onPick("guaranteed")} data-testid=${NEW_SESSION_TEST_IDS.capacityGuaranteed} />
        <span><strong>Guaranteed</strong> — within your organization's guaranteed GPUs; never taken back.</span></label>
      <label class="check"><input type="radio" name="capacity" value="borrowed" .checked=${p.choice === "borrowed"}
        @change=${() => p.onPick("borrowed")} data-testid=${NEW_SESSION_TEST_IDS.capacityBorrowed} />
        <span><strong>Borrowed</strong> — idle GPUs beyond your guarantee, at a lower rate; may be reclaimed.</span></label>
      ${
        terms && c
          ? html`<p class="tone-warn" data-testid=${NEW_SESSION_TEST_IDS.reclaimTerms}>Borrowed at ${c.rate_multiplier}× the rate
              (${formatCredits(c.hourly_rate)} instead of ${formatCredits(c.full_hourly_rate)} credits/hour). When a guaranteed
              session needs these GPUs you get ${seconds(terms.grace_seconds)} of warning, then the session is paused (your files
              are kept) and resumes ahead of new work when room returns. It is never reclaimed in its first
              ${seconds(terms.min_runtime_seconds)}.</p>`
          : nothing
      }
    </fieldset>`;
}
