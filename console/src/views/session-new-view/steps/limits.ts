// Step 5: the idle timeout and maximum running time asked, within the resource policy's bounds (checked
// as typed).
import type { Task } from "@lit/task";
import { html, nothing } from "lit";
import { renderTask } from "../../../components/task-states.ts";
import { type IdleRules, minutesText } from "../../../data/reclaim.ts";
import { NEW_SESSION_TEST_IDS } from "../../../test-ids/new-session.ts";

export interface LimitsStepProps {
  rules: Task<readonly unknown[], IdleRules | undefined>;
  problems: { idle?: string; runtime?: string };
  idleMinutes: string;
  runtimeHours: string;
  onIdle: (minutes: string) => void;
  onRuntime: (hours: string) => void;
}

export function limitsStep(p: LimitsStepProps) {
  const problems = p.problems;
  return html`<fieldset data-testid=${NEW_SESSION_TEST_IDS.stepLimits}>
      <legend>5. Idle pause and time limit (optional)</legend>
      ${renderTask(p.rules, {
        pendingLabel: "Loading your resource policy…",
        errorHeading: "Your resource policy could not be loaded",
        complete: (r) => {
          if (!r)
            return html`<p class="muted" data-testid=${NEW_SESSION_TEST_IDS.limitsPolicy}>Your organization's resource policy decides when an idle session is paused and how long one may run.</p>`;
          const idleOff = r.timeout_minutes === 0;
          return html`<p class="hint" data-testid=${NEW_SESSION_TEST_IDS.limitsPolicy}>${
            idleOff
              ? "Your resource policy does not pause idle sessions."
              : `A session nobody uses (no GPU work, no typing, no busy kernel) is paused after ${minutesText(r.timeout_minutes)}, with warnings first; you may choose between ${minutesText(r.min_timeout_minutes)} and ${minutesText(r.max_timeout_minutes)}.`
          } Any session is paused after ${minutesText(r.max_runtime_minutes)} of running; you may choose less. Pausing keeps your files; resume to carry on.</p>
          <div class="grid2">
            <div class="field"><label for="idle-timeout">Idle timeout (minutes)</label>
              <input id="idle-timeout" type="number" inputmode="numeric" min=${r.min_timeout_minutes} max=${r.max_timeout_minutes} step="1"
                ?disabled=${idleOff} placeholder=${String(r.timeout_minutes)} .value=${p.idleMinutes}
                aria-invalid=${problems.idle ? "true" : "false"} aria-describedby=${problems.idle ? "idle-timeout-problem" : nothing}
                @input=${(e: Event) => p.onIdle((e.target as HTMLInputElement).value)} data-testid=${NEW_SESSION_TEST_IDS.idleTimeout} />
              ${problems.idle ? html`<p class="tone-warn" id="idle-timeout-problem" data-testid=${NEW_SESSION_TEST_IDS.idleTimeoutProblem}>${problems.idle}</p>` : nothing}
            </div>
            <div class="field"><label for="max-runtime">Maximum running time (hours)</label>
              <input id="max-runtime" type="number" inputmode="decimal" min="0.25" max=${r.max_runtime_minutes / 60} step="0.25"
                placeholder=${String(r.max_runtime_minutes / 60)} .value=${p.runtimeHours}
                aria-invalid=${problems.runtime ? "true" : "false"} aria-describedby=${problems.runtime ? "max-runtime-problem" : nothing}
                @input=${(e: Event) => p.onRuntime((e.target as HTMLInputElement).value)} data-testid=${NEW_SESSION_TEST_IDS.maxRuntime} />
              ${problems.runtime ? html`<p class="tone-warn" id="max-runtime-problem" data-testid=${NEW_SESSION_TEST_IDS.maxRuntimeProblem}>${problems.runtime}</p>` : nothing}
            </div>
          </div>`;
        },
      })}
    </fieldset>`;
}
