// The session reconciler: one session at a time (the work queue's key), from what is observed (the
// Session, its operators' reports, its cluster's liveness, its node) to its status (lifecycle.ts'
// planSession decides), its mirror (dispatch.ts carries out) and its Events (event-recorder.ts).
//
// A status of an interim phase (Starting, Resuming, Pausing, Terminating) is recorded in the history row
// only; any other is written to the resource with the resourceVersion read. Either way a write is made
// only on what the writer saw: a stale cache's resource write fails with 409, an interim write checks the
// informer's version and the interim status it stood on, one write per session is in flight at a time,
// and a stale leader's interim records are fenced off in Postgres. So a session is never placed twice.
import {
  ANNOTATIONS,
  INTERIM_PHASES,
  type InterimStatus,
  type Session,
  SessionKind,
  sessionIdOf,
  sessionPath,
  statusBasis,
} from "@berth/crds";
import type { Logger } from "pino";
import type { KubeApi } from "../kube/client.ts";
import { type KubeObject, keyOf } from "../kube/informer.ts";
import type { Dispatch } from "./dispatch.ts";
import type { EventRecorder } from "./event-recorder.ts";
import { recordUnrecorded } from "./history.ts";
import { type KubeEventSpec, type LifecycleTiming, planSession } from "./lifecycle.ts";
import type { SessionMemory } from "./memory.ts";
import { interimOf, type Observed } from "./observed.ts";
import type { WriteCounts } from "./options.ts";
import { RetryAfter } from "./retry-after.ts";
import type { SessionStore } from "./store.ts";

/** How long a session is kept off the cluster where its pod found no node. */
const AVOID_MS = 5 * 60_000;

export interface ReconcilerDeps {
  kube: KubeApi;
  store: SessionStore;
  observed: Observed;
  memory: SessionMemory;
  dispatch: Dispatch;
  events: EventRecorder;
  counts: WriteCounts;
  log: Logger;
  now: () => Date;
  timing: LifecycleTiming;
  schedulePlacement(): void;
}

export class SessionReconciler {
  readonly #d: ReconcilerDeps;

  constructor(d: ReconcilerDeps) {
    this.#d = d;
  }

  async reconcile(key: string): Promise<{ requeueAfterMs?: number } | undefined> {
    const { observed, memory, store, log } = this.#d;
    const s = observed.session(key);
    if (!s) return undefined;
    const id = sessionIdOf(s.metadata.name as string);
    // The history lagging must not hold the session up (a pause must still free its GPU while Postgres
    // fails): the entry stays, and the next reconcile or status write records it.
    await recordUnrecorded(store, memory, id, s).catch((err: unknown) =>
      log.warn({ err: String(err), session: id }, "recording a transition failed; retried later"),
    );
    const cluster = s.status?.cluster;
    const mirrorState = memory.mirrorStates.get(id) ?? { revision: 0, restarts: 0 };
    const report = cluster
      ? observed.reports
          .get(id)
          ?.find((r) => r.clusterId === cluster && r.revision >= mirrorState.revision && mirrorState.revision > 0)
      : undefined;
    const record = cluster ? observed.clusterRecords.get(cluster) : undefined;
    const mirror = memory.mirrors.get(id);
    const unschedulableSince = memory.unschedulableSince.get(id);
    const plan = planSession({
      session: s,
      now: this.#d.now(),
      ...(report ? { report } : {}),
      ...(cluster ? { cluster: { registered: !!record?.registered, reporting: observed.reporting(record) } } : {}),
      mirror:
        mirror && mirror.cluster === cluster ? (mirror.state === "deleting" ? "present" : mirror.state) : "unknown",
      nodeLost: observed.nodeLost(s),
      ...(unschedulableSince ? { unschedulableSince } : {}),
      restartsRequested: Number(s.metadata.annotations?.[ANNOTATIONS.restarts] ?? "0"),
      restartsApplied: mirrorState.restarts,
      timing: this.#d.timing,
    });

    // Before the write: the write's own watch event can start a placement pass that must see it.
    if (plan.avoidCluster)
      memory.avoid.set(id, { cluster: plan.avoidCluster, until: this.#d.now().getTime() + AVOID_MS });
    let current: Session = s;
    if (plan.status) {
      const written = await this.writeStatus(s, plan.status, plan.events);
      if (!written) return { requeueAfterMs: 200 };
      current = written;
    } else this.#d.events.record(s, plan.events);

    // The operator saw the current mirror go (MirrorLost): what is remembered of it is stale, and ensure
    // would trust it and write nothing.
    if (plan.mirror?.op === "ensure" && report?.phase === "Terminated" && cluster)
      memory.mirrors.set(id, { cluster, state: "absent" });
    if (plan.mirror && cluster) {
      try {
        // The revision read before the status write: the write's watch event may have started a placement
        // that took a new one meanwhile (while the history was recorded), and a delete of the old mirror
        // must not be remembered as the new one's state (nothing would write it then).
        await this.#d.dispatch.run(current, cluster, plan.mirror, { revision: mirrorState.revision || undefined });
      } catch (e) {
        if (e instanceof RetryAfter) return { requeueAfterMs: e.ms };
        throw e;
      }
    }
    if (plan.needsPlacement) this.#d.schedulePlacement();
    // Level-based: the delete that came with a phase change is tried once; a mirror still reported where
    // the session wants no pod is deleted again on every reconcile (and resync) until it is gone.
    let strayError: unknown;
    for (const r of observed.strays(current, id)) {
      if (r.clusterId === cluster && plan.mirror?.op === "delete") continue; // just done
      await this.#d.dispatch
        .run(current, r.clusterId, { op: "delete", propagation: "Background" }, { strayAt: r.at })
        .catch((e: unknown) => {
          strayError ??= e;
        });
    }
    if (strayError) throw strayError;
    if (plan.deleteResource) await this.#deleteResource(s);
    return plan.requeueAfterMs !== undefined ? { requeueAfterMs: plan.requeueAfterMs } : undefined;
  }

  /**
   * The session's next status, from `s` as it stood (Observed.effective): recorded in the history row
   * when its phase is an interim one, else written to the resource. Undefined on a conflict (the caller
   * retries on fresh data).
   */
  async writeStatus(
    s: Session,
    status: NonNullable<Session["status"]>,
    events: KubeEventSpec[],
  ): Promise<Session | undefined> {
    const { observed, memory, counts } = this.#d;
    const ns = s.metadata.namespace as string;
    const name = s.metadata.name as string;
    const id = sessionIdOf(name);
    const interim = INTERIM_PHASES.includes(status.phase ?? "Pending");
    const raw = observed.sessions.store.get(`${ns}/${name}`);
    // What it stood on must still stand: no write of its own in flight, the interim status it showed
    // still the one that applies, and for a record in Postgres (no resourceVersion to check there) the
    // resource as the informer has it still the one it read.
    if (
      memory.writing.has(id) ||
      !raw ||
      interimOf(s) !== interimOf(observed.effective(raw)) ||
      (interim && raw.metadata.resourceVersion !== s.metadata.resourceVersion)
    ) {
      if (memory.writing.has(id)) memory.writing.set(id, true);
      counts.conflicts++;
      return undefined;
    }
    memory.writing.set(id, false);
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      const turnedAway = memory.writing.get(id);
      memory.writing.delete(id);
      if (turnedAway) this.#d.schedulePlacement();
    };
    try {
      return interim
        ? await this.#recordInterim(s, raw, status, events)
        : await this.#writeResource(s, status, events, release);
    } finally {
      release();
    }
  }

  /** An interim status: one record in Postgres (the row, the stream), none on the resource. */
  async #recordInterim(
    s: Session,
    raw: Session & KubeObject,
    status: NonNullable<Session["status"]>,
    events: KubeEventSpec[],
  ): Promise<Session> {
    const { observed, memory, store, counts } = this.#d;
    const id = sessionIdOf(raw.metadata.name as string);
    const interim: InterimStatus = { status, basis: statusBasis(raw.status) };
    const before = memory.unrecorded.get(id) ?? s;
    memory.interim.set(id, interim);
    const after = observed.effective(raw);
    try {
      await store.recordTransition(before, after, interim);
    } catch (err) {
      // Not recorded, so not the session's status: what it stood on stands.
      if (memory.interim.get(id) === interim) {
        const was = interimOf(s);
        if (was) memory.interim.set(id, was);
        else memory.interim.delete(id);
      }
      throw err;
    }
    if (memory.unrecorded.get(id) === before) memory.unrecorded.delete(id);
    counts.interimWrites++;
    this.#d.events.record(after, events);
    return after;
  }

  /**
   * PUT /status with the resourceVersion read; undefined on a conflict. `release` lets the next write of
   * the session go once this one's record is queued: the store records a session's transitions in the
   * order of the calls, and a placement need not wait for the record of the write that freed it.
   */
  async #writeResource(
    s: Session,
    status: NonNullable<Session["status"]>,
    events: KubeEventSpec[],
    release: () => void,
  ): Promise<Session | undefined> {
    const { observed, memory, store, counts } = this.#d;
    const ns = s.metadata.namespace as string;
    const name = s.metadata.name as string;
    const body = { ...s, status };
    const res = await this.#d.kube.request<KubeObject>("PUT", sessionPath(ns, name, "status"), { body });
    if (res.status === 409 || res.status === 404) {
      counts.conflicts++;
      return undefined;
    }
    if (res.status !== 200)
      throw new Error(`writing the status of ${ns}/${name}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    counts.statusWrites++;
    const id = sessionIdOf(name);
    const before = memory.unrecorded.get(id) ?? s;
    let after: Session;
    try {
      observed.sessions.observe(res.body);
      // The resource's status moved on: an interim status it followed no longer applies. Only now, so
      // that the informer's event above still saw the status it moved from (controller.ts, #onSession).
      memory.interim.delete(id);
      // The informer parsed it already (unless its watch brought a newer version first).
      const stored = observed.sessions.store.get(`${ns}/${name}`);
      after =
        stored && stored.metadata.resourceVersion === res.body.metadata.resourceVersion
          ? stored
          : SessionKind.schema.parse(res.body);
      this.#d.events.record(after, events);
      const recordingNow = store.recordTransition(before, after);
      release();
      await recordingNow;
    } catch (err) {
      memory.interim.delete(id);
      memory.unrecorded.set(id, before);
      throw err;
    }
    if (memory.unrecorded.get(id) === before) memory.unrecorded.delete(id);
    return after;
  }

  async #deleteResource(s: Session): Promise<void> {
    const res = await this.#d.kube.request(
      "DELETE",
      sessionPath(s.metadata.namespace as string, s.metadata.name as string),
      {
        body: { apiVersion: "v1", kind: "DeleteOptions", preconditions: { uid: s.metadata.uid } },
      },
    );
    if (res.status >= 300 && res.status !== 404 && res.status !== 409)
      throw new Error(`deleting ${keyOf(s as KubeObject)}: ${res.status}`);
    this.#d.counts.resourceDeletes++;
    await this.#d.store.recordDeleted(s);
  }
}
