// The head of a session's page: its name, phase and the actions the phase allows, what the phase means,
// and while it waits its place in the queue with the start estimate (docs/dev/fair-share.md).
import { html, nothing } from "lit";
import type { QueueEta, Session } from "../../api/openapi.gen.ts";
import { asSentence, formatTime } from "../../data/format.ts";
import { ACTION_LABEL, phaseHelp, type SessionAction } from "../../data/phases.ts";
import { SESSION_TEST_IDS } from "../../test-ids/session.ts";

export interface HeaderProps {
  session: Session;
  /** The action under way, if any: its button reads "Pausing…" and every button waits. */
  acting: SessionAction | undefined;
  actionError: unknown;
  /** While it waits: its queue entry's estimate. */
  eta: QueueEta | undefined;
  onAct: (action: SessionAction) => void;
}

function etaText(e: QueueEta | undefined) {
  if (!e) return nothing;
  // Its own line: the queue's reason before it ends without a full stop ("…HBM3").
  return html`<div data-testid=${SESSION_TEST_IDS.queueEta} data-method=${e.method}>Estimate: ${e.message} (as of ${formatTime(e.as_of)}).${
    e.hint ? html` <span data-testid=${SESSION_TEST_IDS.queueEtaHint}>${e.hint.message}</span>` : nothing
  }</div>`;
}

/** The name, phase and actions; what the phase means; its place in the queue with the estimate. */
export function sessionHeader(p: HeaderProps) {
  const s = p.session;
  const allowed = new Set(s.allowed_actions);
  return html`<div class="page-head">
      <h1 data-testid=${SESSION_TEST_IDS.name}>${s.name ?? s.resource_name}</h1>
      <berth-phase-badge .phase=${s.phase} data-testid=${SESSION_TEST_IDS.phase}></berth-phase-badge>
      <span class="spacer"></span>
      <div class="actions" role="group" aria-label="Session actions">
        ${(["pause", "resume", "restart", "terminate"] as const)
          .filter((a) => allowed.has(a))
          .map(
            (a) =>
              html`<button type="button" class=${a === "terminate" || a === "restart" ? "danger" : ""} ?disabled=${!!p.acting} @click=${() => p.onAct(a)} data-testid=${SESSION_TEST_IDS.action(a)}
                title=${a === "pause" ? "Stops the pod and billing and returns the GPU; files on volumes are kept" : ""}>${p.acting === a ? `${ACTION_LABEL[a]}…` : ACTION_LABEL[a]}</button>`,
          )}
      </div>
    </div>
    <p class="muted" data-testid=${SESSION_TEST_IDS.phaseHelp}>${phaseHelp(s.phase)}${s.message && !s.queue ? html` ${asSentence(s.message)}` : nothing}</p>
    ${
      s.queue
        ? html`<div class="card queue" role="status" data-testid=${SESSION_TEST_IDS.queueInfo}>
          <strong>#${s.queue.position} in the queue:</strong> ${asSentence(s.queue.reason)}
          ${etaText(p.eta)}
          <a href="/queue">See the queue</a>
        </div>`
        : nothing
    }
    ${p.actionError ? html`<berth-error-panel heading="The action was refused" .error=${p.actionError}></berth-error-panel>` : nothing}`;
}
