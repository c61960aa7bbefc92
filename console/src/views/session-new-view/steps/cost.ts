// Step 8: what the session would cost for a chosen running time (storage included), whether a GPU is
// free now or it would queue, and, when it could not start at all, why in plain words and what to do.
import type { Task } from "@lit/task";
import { html, nothing } from "lit";
import type { CostPreview } from "../../../api/openapi.gen.ts";
import { renderTask } from "../../../components/task-states.ts";
import { formatCredits } from "../../../data/format.ts";
import type { RefusalText } from "../../../data/refusal.ts";
import { NEW_SESSION_TEST_IDS } from "../../../test-ids/new-session.ts";
import { DURATIONS, type Previewed } from "./types.ts";

export type Refusal = { preview: CostPreview; text: RefusalText } | undefined;

export interface CostStepProps {
  preview: Task<readonly unknown[], Previewed | undefined>;
  duration: number;
  refusal: Refusal;
  onDuration: (seconds: number) => void;
}

export function costStep(p: CostStepProps) {
  return html`<fieldset data-testid=${NEW_SESSION_TEST_IDS.costPreview}>
      <legend>8. Cost</legend>
      <div class="field" style="max-width:14rem"><label for="duration">If it runs for</label>
        <select id="duration" @change=${(e: Event) => p.onDuration(Number((e.target as HTMLSelectElement).value))}>
          ${DURATIONS.map((d) => html`<option value=${d.s} ?selected=${d.s === p.duration}>${d.label}</option>`)}
        </select></div>
      ${renderTask(p.preview, {
        pendingLabel: "Working out the cost…",
        errorHeading: "The cost could not be worked out",
        complete: (c) =>
          c
            ? html`<p class="cost"><strong data-testid=${NEW_SESSION_TEST_IDS.costTotal}>${formatCredits(c.cost)} credits</strong> for ${DURATIONS.find((d) => d.s === c.duration_seconds)?.label ?? `${c.duration_seconds} s`}
                  at ${formatCredits(c.hourly_rate)} credits/hour (${c.gpu_count} × ${c.gpu_model}<span data-testid=${NEW_SESSION_TEST_IDS.costRateClass}>, ${c.capacity_class} rate</span>). Paused time is free.</p>
                ${
                  c.storage.size_gb > 0
                    ? html`<p data-testid=${NEW_SESSION_TEST_IDS.costStorage}>Storage: ${formatCredits(c.storage.hourly_rate)} credits/hour for ${c.storage.size_gb} GB of volumes, billed while they exist, whether the session runs or not.</p>`
                    : nothing
                }
                ${
                  !c.can_start
                    ? refusalPanel(p.refusal)
                    : c.gpu_available_now
                      ? html`<p class="tone-ok" data-testid=${NEW_SESSION_TEST_IDS.gpuNow}>A GPU is free now: the session should start within seconds.</p>`
                      : html`<p class="tone-warn" data-testid=${NEW_SESSION_TEST_IDS.willQueue}>No ${c.gpu_model} is free right now: the session will wait in the queue and start when one frees up. You are not charged while it waits.</p>`
                }`
            : nothing,
      })}
    </fieldset>`;
}

function refusalPanel(r: Refusal) {
  if (!r) return nothing;
  const { text, preview } = r;
  const remedy = text.remedy;
  return html`<div class="refusal" data-testid=${NEW_SESSION_TEST_IDS.startRefusal} data-code=${preview.refusal?.code ?? ""} data-limit=${String(preview.refusal?.details.limit ?? "")}>
      <p class="refusal-headline"><strong>${text.headline}.</strong> <span data-testid=${NEW_SESSION_TEST_IDS.refusalExplanation}>${text.explanation}</span></p>
      <p class="muted refusal-message">The API says: <span data-testid=${NEW_SESSION_TEST_IDS.refusalMessage}>${preview.refusal?.message ?? ""}</span></p>
      <p class="refusal-remedy">${
        "href" in remedy
          ? html`<a class="button" href=${remedy.href} data-testid=${NEW_SESSION_TEST_IDS.refusalRemedy} data-kind=${remedy.kind}>${remedy.label}</a>`
          : html`<span data-testid=${NEW_SESSION_TEST_IDS.refusalRemedy} data-kind=${remedy.kind}>${remedy.label}.</span>`
      }</p>
    </div>`;
}
