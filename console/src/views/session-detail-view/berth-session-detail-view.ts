// One session: its phase and the timeline of what happened and why, where it runs, connect buttons
// (links open in a new tab; each carries a fresh single-use token), logs, live usage, and the actions
// its phase allows, confirmed where they destroy something. Live through the event stream.
import { Task } from "@lit/task";
import { html, LitElement, nothing } from "lit";
import type { Session } from "../../api/openapi.gen.ts";
import { auth } from "../../app/context.ts";
import { onSessionsChanged } from "../../app/live.ts";
import { confirmAction } from "../../components/confirm-dialog/index.ts";
import "../../components/error-panel/index.ts";
import "../../components/log-viewer/index.ts";
import "../../components/phase-badge/index.ts";
import { renderTask } from "../../components/task-states.ts";
import "../../components/monitoring-panel/index.ts";
import "../../components/usage-chart/index.ts";
import {
  actOnSession,
  keepSessionRunning,
  loadConnectLinks,
  loadQueue,
  loadSession,
  loadSessionIdle,
  loadSessionResource,
  loadSessionResourceEvents,
  loadSessionUsage,
} from "../../app/sessions.ts";
import { loadSessionVolumes } from "../../app/storage.ts";
import { formatCredits, formatDuration, formatPercent, formatRelative, formatTime } from "../../data/format.ts";
import { ACTION_LABEL, actionConfirm, phaseHelp, type SessionAction } from "../../data/phases.ts";
import { countdown, pauseReasonText, suspendedText } from "../../data/reclaim.ts";
import { timeline } from "../../data/timeline.ts";
import { tierLabel } from "../../data/wizard.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { SESSION_TEST_IDS } from "../../test-ids/session.ts";
import { styles } from "./styles.ts";

type ConnectKind = "lab" | "terminal" | "code";
const CONNECT_LABEL: Record<ConnectKind, string> = {
  lab: "Open notebook",
  terminal: "Open terminal",
  code: "Open code editor",
};

export class BerthSessionDetailView extends LitElement {
  static override styles = [tokens, shared, page, styles];
  static override properties = {
    sessionId: { type: String },
    acting: { state: true },
    actionError: { state: true },
    connectError: { state: true },
    showResource: { state: true },
    keeping: { state: true },
    keepError: { state: true },
    clockTick: { state: true },
  };
  declare keeping: boolean;
  declare keepError: unknown;
  declare clockTick: number;
  declare sessionId: string;
  declare acting: SessionAction | undefined;
  declare actionError: unknown;
  declare connectError: unknown;
  declare showResource: boolean;
  #unsubscribe: (() => void) | undefined;
  #usageTimer: ReturnType<typeof setInterval> | undefined;

  #session = new Task(this, {
    task: async ([id], { signal }) => loadSession(id as string, signal),
    args: () => [this.sessionId],
  });
  #usage = new Task(this, {
    task: async ([id], { signal }) => loadSessionUsage(id as string, signal),
    args: () => [this.sessionId],
  });
  #mounts = new Task(this, {
    task: async ([id], { signal }) => loadSessionVolumes(id as string, signal),
    args: () => [this.sessionId],
  });
  /** Where the idle rule stands (which signal is missing while it is suspended); only while it runs. */
  #idle = new Task(this, {
    task: async ([id, running], { signal }) => (running ? loadSessionIdle(id as string, signal) : undefined),
    args: () => [this.sessionId, this.#session.value?.phase === "Running"],
  });
  /** While it waits: its queue entry's start estimate (docs/dev/fair-share.md). */
  #eta = new Task(this, {
    task: async ([id, queued], { signal }) => {
      if (!queued) return undefined;
      const q = await loadQueue("mine", 1, signal);
      return q.data.find((e) => e.session.id === id)?.eta ?? undefined;
    },
    args: () => [this.sessionId, this.#session.value?.phase === "Queued"],
  });
  #resource = new Task(this, {
    task: async ([id, show], { signal }) => {
      if (!show) return undefined;
      const [resource, events] = await Promise.all([
        loadSessionResource(id as string, signal),
        loadSessionResourceEvents(id as string, signal),
      ]);
      return { resource, events };
    },
    args: () => [this.sessionId, this.showResource],
  });

  constructor() {
    super();
    this.sessionId = "";
    this.acting = undefined;
    this.actionError = undefined;
    this.connectError = undefined;
    this.showResource = false;
    this.keeping = false;
    this.keepError = undefined;
    this.clockTick = 0;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.#unsubscribe = onSessionsChanged((_last, burst) => {
      // Stream events name their session (session_id); poll ticks and resets name none: reload then too.
      const mine = burst.filter((c) => {
        const id = (c.data as { session_id?: string } | undefined)?.session_id;
        return !id || id === this.sessionId;
      });
      if (mine.length === 0) return;
      void this.#session.run();
      if (mine.some((c) => c.message?.event === "session.updated")) void this.#usage.run();
    });
    this.#usageTimer = setInterval(() => {
      if (this.#session.value?.phase === "Running") {
        void this.#usage.run();
        void this.#idle.run();
      }
      // The countdown of a warned pause moves on its own.
      const v = this.#session.value;
      if (v?.idle_warning || v?.runtime_warning || v?.reclaim_notice?.pending) this.clockTick++;
    }, 15_000);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#unsubscribe?.();
    clearInterval(this.#usageTimer);
  }

  async #act(s: Session, action: SessionAction): Promise<void> {
    const confirm = actionConfirm(action, s.name ?? s.resource_name);
    if (confirm && !(await confirmAction(confirm))) return;
    this.acting = action;
    this.actionError = undefined;
    try {
      await actOnSession(s.id, action);
      await this.#session.run();
    } catch (e) {
      this.actionError = e;
    } finally {
      this.acting = undefined;
    }
  }

  async #keepRunning(s: Session): Promise<void> {
    this.keeping = true;
    this.keepError = undefined;
    try {
      await keepSessionRunning(s.id);
      await this.#session.run();
    } catch (e) {
      this.keepError = e;
    } finally {
      this.keeping = false;
    }
  }

  /** The idle countdown and "Keep running" once a warning is out; the time limit's; why it was paused. */
  #reclaim(s: Session) {
    const now = Date.now();
    const idle = s.idle_warning;
    const limit = s.runtime_warning;
    const paused = s.phase === "Paused" ? pauseReasonText(s.reason) : undefined;
    const state = s.phase === "Running" ? this.#idle.value : undefined;
    const suspended = state?.state === "suspended" ? suspendedText(state.missing) : undefined;
    return html`${
      idle
        ? html`<div class="card warning" role="status" data-testid=${SESSION_TEST_IDS.idleWarning}>
          <strong>Idle: this session will be paused <span data-testid=${SESSION_TEST_IDS.idleCountdown}>${countdown(idle.deadline, now)}</span></strong>
          (at ${formatTime(idle.deadline)}). Nothing has used it since ${formatTime(idle.since)}: no GPU work, no typing, no busy kernel.
          Pausing frees its GPU and stops billing; files on volumes are kept.
          ${
            s.owner_id === auth.userId
              ? html`<button type="button" class="primary" ?disabled=${this.keeping} @click=${() => this.#keepRunning(s)} data-testid=${SESSION_TEST_IDS.keepRunning}>${this.keeping ? "Keeping it running…" : "Keep running"}</button>`
              : nothing
          }
        </div>`
        : nothing
    }
      ${
        limit
          ? html`<div class="card warning" role="status" data-testid=${SESSION_TEST_IDS.runtimeWarning}>
            <strong>Time limit: this session will be paused <span>${countdown(limit.deadline, now)}</span></strong> (at ${formatTime(limit.deadline)}), when it reaches its maximum running time. Save your work; resume it afterwards to start a new period.
          </div>`
          : nothing
      }
      ${suspended ? html`<p class="card" role="status" data-testid=${SESSION_TEST_IDS.idleSuspended} data-missing=${this.#idle.value?.missing.join(",") ?? ""}>${suspended}</p>` : nothing}
      ${this.#capacity(s, now)}
      ${paused ? html`<p class="card" data-testid=${SESSION_TEST_IDS.pauseReason}>${paused}</p>` : nothing}
      ${this.keepError ? html`<berth-error-panel heading="It could not be kept running" .error=${this.keepError}></berth-error-panel>` : nothing}`;
  }

  #etaText() {
    const e = this.#eta.value;
    if (!e) return nothing;
    return html`<span data-testid=${SESSION_TEST_IDS.queueEta} data-method=${e.method}>Estimate: ${e.message} (as of ${formatTime(e.as_of)}).${
      e.hint ? html` <span data-testid=${SESSION_TEST_IDS.queueEtaHint}>${e.hint.message}</span>` : nothing
    }</span>`;
  }

  /** A borrowed session's reclaim notice (docs/dev/fair-share.md): the terms, then the countdown once warned. */
  #capacity(s: Session, now: number) {
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

  async #connect(kind: ConnectKind): Promise<void> {
    this.connectError = undefined;
    // Open the tab during the click (popup blockers allow it), then send it to the link once we have it:
    // each link carries a single-use token valid for under a minute, so links are fetched on demand.
    const tab = window.open("about:blank", "_blank");
    try {
      const r = await loadConnectLinks(this.sessionId);
      const url = r.links[kind];
      if (tab) {
        tab.opener = null;
        tab.location.href = url;
      } else {
        window.open(url, "_blank", "noopener");
      }
    } catch (e) {
      tab?.close();
      this.connectError = e;
    }
  }

  #header(s: Session) {
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
                html`<button type="button" class=${a === "terminate" || a === "restart" ? "danger" : ""} ?disabled=${!!this.acting} @click=${() => this.#act(s, a)} data-testid=${SESSION_TEST_IDS.action(a)}
                  title=${a === "pause" ? "Stops the pod and billing and returns the GPU; files on volumes are kept" : ""}>${this.acting === a ? `${ACTION_LABEL[a]}…` : ACTION_LABEL[a]}</button>`,
            )}
        </div>
      </div>
      <p class="muted" data-testid=${SESSION_TEST_IDS.phaseHelp}>${phaseHelp(s.phase)}${s.message ? html` ${s.message}` : nothing}</p>
      ${
        s.queue
          ? html`<div class="card queue" role="status" data-testid=${SESSION_TEST_IDS.queueInfo}>
            <strong>#${s.queue.position} in the queue</strong> for ${tierLabel({ ...s, slice_memory_mib: s.gpu_slice_memory_mib, fraction: s.gpu_fraction })}${s.cluster_pin ? html` on ${s.cluster_pin}` : nothing}. ${s.queue.reason}
            ${this.#etaText()}
            <a href="/queue">See the queue</a>
          </div>`
          : nothing
      }
      ${this.actionError ? html`<berth-error-panel heading="The action was refused" .error=${this.actionError}></berth-error-panel>` : nothing}
      ${this.#reclaim(s)}`;
  }

  #connectButtons(s: Session) {
    const running = s.phase === "Running";
    return html`<section class="card" aria-labelledby="connect-h">
      <h2 id="connect-h">Connect</h2>
      ${
        running
          ? html`<div class="actions">${(["lab", "terminal", "code"] as const).map(
              (k) =>
                html`<button type="button" class=${k === "lab" ? "primary" : ""} @click=${() => this.#connect(k)} data-testid=${SESSION_TEST_IDS.connect(k)}>${CONNECT_LABEL[k]}<span class="visually-hidden"> (opens in a new tab)</span></button>`,
            )}</div>`
          : html`<p class="muted">Connect links work while the session is Running.</p>`
      }
      ${this.connectError ? html`<berth-error-panel heading="No link could be made" .error=${this.connectError}></berth-error-panel>` : nothing}
    </section>`;
  }

  #facts(s: Session) {
    return html`<section class="card" aria-labelledby="facts-h">
      <h2 id="facts-h">Details</h2>
      <dl class="facts">
        <dt>Id</dt><dd><code>${s.id}</code></dd>
        <dt>Cluster</dt><dd data-testid=${SESSION_TEST_IDS.cluster}>${s.cluster_id ?? "—"}${s.cluster_pin ? html` <span class="muted">(pinned to ${s.cluster_pin})</span>` : nothing}</dd>
        <dt>Node</dt><dd data-testid=${SESSION_TEST_IDS.node}>${s.node ?? "—"}</dd>
        <dt>GPU</dt><dd data-testid=${SESSION_TEST_IDS.gpu}>${tierLabel({ ...s, slice_memory_mib: s.gpu_slice_memory_mib, fraction: s.gpu_fraction, mig_profile: s.gpu_mig_profile })}</dd>
        <dt>Card</dt><dd data-testid=${SESSION_TEST_IDS.cards}>${s.gpu_cards?.length ? s.gpu_cards.join(", ") : "—"}</dd>
        <dt>Offering</dt><dd>${s.offering} · ${formatCredits(s.hourly_credit_rate)} credits/hour</dd>
        <dt>Capacity</dt><dd data-testid=${SESSION_TEST_IDS.capacityClass} data-class=${s.capacity_class}>${
          s.capacity_class === "borrowed"
            ? `Borrowed: charged at the borrowed rate, ${s.rate_multiplier}× the offering's (${formatCredits(Math.round(Number(s.hourly_credit_rate) * s.rate_multiplier))} credits/hour); may be reclaimed after a warning`
            : "Guaranteed: charged at the offering's rate; never reclaimed"
        }</dd>
        <dt>Preset</dt><dd>${s.preset}</dd>
        <dt>Image</dt><dd>${s.image}</dd>
        <dt>Priority</dt><dd>${s.priority}</dd>
        <dt>Restarts</dt><dd>${s.restarts}</dd>
        <dt>Created</dt><dd>${formatTime(s.created_at)}</dd>
        ${s.started_at ? html`<dt>Started</dt><dd>${formatTime(s.started_at)}</dd>` : nothing}
      </dl>
    </section>`;
  }

  #mountsPanel() {
    return html`<section class="card" aria-labelledby="mounts-h" data-testid=${SESSION_TEST_IDS.mounts}>
      <h2 id="mounts-h">Volumes</h2>
      ${renderTask(this.#mounts, {
        pendingLabel: "Loading its volumes…",
        errorHeading: "Its volumes could not be loaded",
        isEmpty: (r) => r.data.length === 0,
        empty: () =>
          html`<p class="muted">No volume: files in this session live only as long as its pod. <a href="/storage/volumes">Volumes</a> keep them.</p>`,
        complete: (r) =>
          html`<ul>${r.data.map((v) => {
            const m = v.mounts?.[0];
            return html`<li data-testid=${SESSION_TEST_IDS.mount} data-volume-id=${v.id}><strong>${v.name}</strong> at <code>${m?.mount_path ?? "/mnt/data"}</code>
            ${m?.read_only ? html`<span class="badge tone-muted">read-only</span>` : nothing}
            <span class="muted">${v.size_gb} GB${v.bound_cluster ? ` · claim on ${v.bound_cluster}` : ""}${v.deleted_at ? " · deleted" : ""}</span></li>`;
          })}</ul><p class="hint">Files there are kept when the session pauses, restarts or ends.</p>`,
      })}
    </section>`;
  }

  #timeline(s: Session) {
    return html`<section class="card" aria-labelledby="tl-h">
      <h2 id="tl-h">What happened</h2>
      <ol class="timeline" data-testid=${SESSION_TEST_IDS.timeline}>
        ${timeline(s).map(
          (e) => html`<li class="tone-${e.tone}">
            <time datetime=${e.at} title=${formatTime(e.at)}>${formatRelative(e.at)}</time>
            <span class="what">${e.title}</span>${e.detail ? html`<span class="why">${e.detail}</span>` : nothing}
          </li>`,
        )}
      </ol>
    </section>`;
  }

  #usagePanel() {
    return html`<section class="card" aria-labelledby="usage-h">
      <h2 id="usage-h">Usage</h2>
      ${renderTask(this.#usage, {
        pendingLabel: "Loading usage…",
        errorHeading: "Usage is not available",
        isEmpty: (u) => u.totals.samples === 0,
        empty: () =>
          html`<p class="muted" data-testid=${SESSION_TEST_IDS.usageEmpty}>No usage sample yet. The cluster's operator reports usage every few seconds while the session runs.</p>`,
        complete: (u) => html`<dl class="facts">
            <dt>GPU time</dt><dd data-testid=${SESSION_TEST_IDS.usageGpuTime}>${formatDuration(u.totals.gpu_seconds)}</dd>
            <dt>GPU utilisation</dt><dd>${formatPercent(u.latest?.gpu_utilization)}</dd>
            ${u.latest?.gpu_memory_mib != null ? html`<dt>GPU memory</dt><dd>${u.latest.gpu_memory_mib} MiB</dd>` : nothing}
          </dl>
          ${
            u.series.some((p) => p.gpu_utilization !== null)
              ? html`<berth-usage-chart label="GPU utilisation %" .max=${100} .values=${u.series.map((p) => p.gpu_utilization)}></berth-usage-chart>`
              : html`<berth-usage-chart label="GPU-seconds per sample" .values=${u.series.map((p) => p.gpu_seconds)}></berth-usage-chart>`
          }`,
      })}
    </section>`;
  }

  #resourcePanel() {
    if (!auth.isAdmin) return nothing;
    return html`<details class="card" @toggle=${(e: Event) => (this.showResource = (e.target as HTMLDetailsElement).open)}>
      <summary>Kubernetes resource and events</summary>
      ${
        this.showResource
          ? renderTask(this.#resource, {
              pendingLabel: "Loading the resource…",
              complete: (r) =>
                r
                  ? html`<h3>Events</h3>
                    ${
                      r.events.data.length === 0
                        ? html`<p class="muted">No event (Kubernetes keeps them for an hour).</p>`
                        : html`<div class="table-wrap"><table><caption class="visually-hidden">Kubernetes events</caption><thead><tr><th scope="col">Type</th><th scope="col">Reason</th><th scope="col">Message</th><th scope="col">Last seen</th></tr></thead>
                          <tbody>${r.events.data.map((e) => html`<tr><td>${e.type}</td><td>${e.reason}</td><td>${e.message}${e.count > 1 ? html` <span class="muted">(×${e.count})</span>` : nothing}</td><td>${formatRelative(e.last_timestamp)}</td></tr>`)}</tbody></table></div>`
                    }
                    <h3>Resource</h3><pre class="yaml" tabindex="0">${r.resource.yaml}</pre>`
                  : nothing,
            })
          : nothing
      }
    </details>`;
  }

  override render() {
    return html`<p><a href="/sessions">← Sessions</a></p>
      ${renderTask(this.#session, {
        pendingLabel: "Loading the session…",
        errorHeading: "The session could not be loaded",
        complete: (s) => html`${this.#header(s)}
          <div class="grid2">${this.#connectButtons(s)} ${this.#facts(s)}</div>
          <div class="grid2">${this.#timeline(s)} ${this.#usagePanel()}</div>
          ${this.#mountsPanel()}
          ${
            s.node || s.phase === "Running"
              ? html`<section aria-labelledby="gpu-h"><h2 id="gpu-h">GPU, live</h2>
                <div class="grid2" data-testid=${SESSION_TEST_IDS.gpuCharts}>
                  <berth-monitoring-panel panel="session.gpu_utilization" heading="GPU utilisation" .scope=${{ session: s.id }} range="1h"></berth-monitoring-panel>
                  <berth-monitoring-panel panel="session.gpu_memory_used" heading="GPU memory used" .scope=${{ session: s.id }} range="1h"></berth-monitoring-panel>
                </div></section>`
              : nothing
          }
          <section class="card" aria-labelledby="logs-h"><h2 id="logs-h">Logs</h2>
            ${s.node || s.phase === "Running" ? html`<berth-log-viewer .sessionId=${s.id}></berth-log-viewer>` : html`<p class="muted">Logs appear once the session has a pod.</p>`}
          </section>
          ${this.#resourcePanel()}`,
      })}`;
  }
}
