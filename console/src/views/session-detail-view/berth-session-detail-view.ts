// One session: its phase and the timeline of what happened and why, where it runs, connect buttons
// (links open in a new tab; each carries a fresh single-use token), logs, live usage, and the actions
// its phase allows, confirmed where they destroy something. Live through the event stream.
// The view loads and acts; its parts render from what it hands them: header.ts (name, phase, actions,
// queue), notices.ts (idle, time limit, reclaim, pause), panels.ts (connect, details, volumes, what
// happened, usage, the Kubernetes resource).
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
import { actionConfirm, type SessionAction } from "../../data/phases.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { SESSION_TEST_IDS } from "../../test-ids/session.ts";
import { sessionHeader } from "./header.ts";
import { sessionNotices } from "./notices.ts";
import {
  type ConnectKind,
  connectPanel,
  factsPanel,
  mountsPanel,
  resourcePanel,
  timelinePanel,
  usagePanel,
} from "./panels.ts";
import { styles } from "./styles.ts";

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
    return html`${sessionHeader({
      session: s,
      acting: this.acting,
      actionError: this.actionError,
      eta: this.#eta.value,
      onAct: (a) => this.#act(s, a),
    })}
      ${sessionNotices({
        session: s,
        idle: this.#idle.value,
        mine: s.owner_id === auth.userId,
        keeping: this.keeping,
        keepError: this.keepError,
        onKeepRunning: () => this.#keepRunning(s),
        now: Date.now(),
      })}`;
  }

  override render() {
    return html`<p><a href="/sessions">← Sessions</a></p>
      ${renderTask(this.#session, {
        pendingLabel: "Loading the session…",
        errorHeading: "The session could not be loaded",
        complete: (s) => html`${this.#header(s)}
          <div class="grid2">${connectPanel(s, { connectError: this.connectError, onConnect: (k) => this.#connect(k) })} ${factsPanel(s)}</div>
          <div class="grid2">${timelinePanel(s)} ${usagePanel(this.#usage)}</div>
          ${mountsPanel(this.#mounts)}
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
          ${
            auth.isAdmin
              ? resourcePanel(this.#resource, {
                  shown: this.showResource,
                  onToggle: (open) => (this.showResource = open),
                })
              : nothing
          }`,
      })}`;
  }
}
