// What a session's page warns of above its details: the idle countdown with "Keep running", the time
// limit's, why the idle rule is suspended, a borrowed session's reclaim terms and countdown
// (docs/dev/fair-share.md), and why it was paused.
import { html, nothing } from "lit";
import type { Session } from "../../api/openapi.gen.ts";
import type { loadSessionIdle } from "../../app/sessions.ts";
import { formatTime } from "../../data/format.ts";
import { countdown, pauseReasonText, suspendedText } from "../../data/reclaim.ts";
import { SESSION_TEST_IDS } from "../../test-ids/session.ts";

export type IdleState = Awaited<ReturnType<typeof loadSessionIdle>>;

export interface NoticesProps {
  session: Session;
  /** Where the idle rule stands, while it runs. */
  idle: IdleState | undefined;
  /** The signed-in person owns it: only they may keep it running. */
  mine: boolean;
  keeping: boolean;
  keepError: unknown;
  onKeepRunning: () => void;
  now: number;
}

export function sessionNotices(p: NoticesProps) {
  const s = p.session;
  const idle = s.idle_warning;
  const limit = s.runtime_warning;
  const paused = s.phase === "Paused" ? pauseReasonText(s.reason) : undefined;
  const state = s.phase === "Running" ? p.idle : undefined;
  const suspended = state?.state === "suspended" ? suspendedText(state.missing) : undefined;
  return html`${
    idle
      ? html`<div class="card warning" role="status" data-testid=${SESSION_TEST_IDS.idleWarning}>
          <strong>Idle: this session will be paused <span data-testid=${SESSION_TEST_IDS.idleCountdown}>${countdown(idle.deadline, p.now)}</span></strong>
          (at ${formatTime(idle.deadline)}). Nothing has used it since ${formatTime(idle.since)}: no GPU work, no typing, no busy kernel.
          Pausing frees its GPU and stops billing; files on volumes are kept.
          ${
            p.mine
              ? html`<button type="button" class="primary" ?disabled=${p.keeping} @click=${p.onKeepRunning} data-testid=${SESSION_TEST_IDS.keepRunning}>${p.keeping ? "Keeping it running…" : "Keep running"}</button>`
              : nothing
          }
        </div>`
      : nothing
  }
      ${
        limit
          ? html`<div class="card warning" role="status" data-testid=${SESSION_TEST_IDS.runtimeWarning}>
            <strong>Time limit: this session will be paused <span>${countdown(limit.deadline, p.now)}</span></strong> (at ${formatTime(limit.deadline)}), when it reaches its maximum running time. Save your work; resume it afterwards to start a new period.
          </div>`
          : nothing
      }
      ${suspended ? html`<p class="card" role="status" data-testid=${SESSION_TEST_IDS.idleSuspended} data-missing=${p.idle?.missing.join(",") ?? ""}>${suspended}</p>` : nothing}
      ${capacity(s, p.now)}
      ${paused ? html`<p class="card" data-testid=${SESSION_TEST_IDS.pauseReason}>${paused}</p>` : nothing}
      ${p.keepError ? html`<berth-error-panel heading="It could not be kept running" .error=${p.keepError}></berth-error-panel>` : nothing}`;
}

/** A borrowed session's reclaim notice (docs/dev/fair-share.md): the terms, then the countdown once warned. */
function capacity(s: Session, now: number) {
  const notice = s.reclaim_notice;
  if (!notice) return nothing;
  const pending = notice.pending;
  if (pending && !pending.paused_at && s.phase === "Running")
    return html`<div class="card warning" role="status" data-testid=${SESSION_TEST_IDS.reclaimWarning}>
      <strong>Reclaimed: this borrowed session will be paused <span data-testid=${SESSION_TEST_IDS.reclaimCountdown}>${countdown(pending.pause_at, now)}</span></strong>
      (at ${formatTime(pending.pause_at)}). ${pending.reason} Save your work; files on volumes are kept, and it resumes ahead of new work when room returns.
    </div>`;
  if (pending?.paused_at)
    return html`<p class="card" role="status" data-testid=${SESSION_TEST_IDS.reclaimPaused}>Paused at ${formatTime(pending.paused_at)} to give its borrowed GPU back: ${pending.reason} It resumes ahead of new work when room returns, if its credits cover a minimum run (as your own resume would need).</p>`;
  return html`<p class="card" data-testid=${SESSION_TEST_IDS.reclaimNotice}>${notice.message}</p>`;
}
