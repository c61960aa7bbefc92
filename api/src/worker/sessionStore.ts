// The worker's SessionStore (controllers/src/sessions/store.ts) over Postgres: reads of what operators
// reported, the history rows and the stream's events. LISTENs for report and inventory notifications
// (triggers of migration 20261122000004) on one dedicated connection, reconnecting when it drops.
//
// Transitions are written in batches (TransitionLog): every insert into session_events holds the stream's
// commit-order lock until its transaction commits (migration 20261122000200), so one transaction per
// transition serialized the whole worker on that lock, a round trip each. A batch is one transaction
// with one UPDATE and one INSERT for all its sessions; calls that come while the writers are busy form
// the next batch.

import {
  type ClusterRecord,
  HOLDING_PHASES,
  type MirrorState,
  type SessionStore,
  type StoredReport,
} from "@berth/controllers";
import { type InterimStatus, PAUSE_REASON_ANNOTATION, type Session, SessionReason, sessionIdOf } from "@berth/crds";
import type { Knex } from "knex";
import type { Logger } from "pino";
import { nodePoolRefs } from "../db/operations/nodePools/nodePools.ts";
import { findSessionById } from "../db/operations/sessions/findSessionById.ts";
import { type SessionTransition, updateSessionsFromTransitions } from "../db/operations/sessions/recordTransitions.ts";
import { insertSessionEvents, purgeSessionEvents } from "../db/operations/sessions/sessionEvents.ts";
import type { SessionRow } from "../db/operations/sessions/types.ts";
import { failPendingSession, pendingSessionRows } from "../db/operations/sessions/unmadeCreates.ts";
import {
  mirrorStates,
  nextMirrorRevision,
  nextMirrorRevisions,
  recordedPhases,
} from "../db/operations/sessions/updateSession.ts";
import { leadingCondition, viewFromResource, viewFromRow } from "../db/operations/sessions/view.ts";
import {
  clusterLiveness,
  deleteStatusReports,
  placementInventory,
  statusReports,
} from "../db/operations/sessions/workerQueries.ts";
import { isDatabaseUnreachable } from "../db/unreachable.ts";
import { type NewNotification, notify } from "../domain/notifications/notify.ts";
import { sessionEventOf } from "../domain/sessions/events.ts";
import { readSystemSettings } from "../domain/settings/settings.ts";

const ts = (s: string | undefined) => (s ? new Date(s) : null);

/** What the history row takes of a session's status (kept off the resource when `interim` is given). */
export function transitionOf(after: Session, interim?: InterimStatus): SessionTransition {
  const st = after.status ?? {};
  const lead = leadingCondition(st.conditions);
  return {
    id: sessionIdOf(after.metadata.name as string),
    phase: st.phase ?? "Pending",
    desired_state: after.spec.desiredState,
    priority: after.spec.priority,
    node: st.node ?? null,
    queue_position: st.queue?.position ?? null,
    reason: lead?.reason ?? null,
    message: (st.queue?.reason ?? lead?.message ?? null)?.slice(0, 4000) ?? null,
    queued_at: ts(st.queuedAt),
    scheduled_at: ts(st.scheduledAt),
    started_at: ts(st.startedAt),
    paused_at: ts(st.pausedAt),
    terminated_at: ts(st.terminatedAt),
    gpu_model: st.gpuModel ?? null,
    cluster_id: st.cluster ?? null,
    // Cards only while it holds them (a paused session keeps its last placement in status, not its cards).
    gpu_cards: st.gpuAssignment && HOLDING_PHASES.includes(st.phase ?? "Pending") ? st.gpuAssignment.cards : null,
    interim_status: interim ?? null,
  };
}

/** An interim record of a worker that another has fenced off (it no longer leads). */
export class FencedOff extends Error {
  constructor(term: number, current: number) {
    super(`this worker's term ${term} was fenced off by term ${current}: it no longer leads`);
  }
}

interface PendingTransition {
  before: Session;
  after: Session;
  interim?: InterimStatus;
  resolve(): void;
  reject(err: unknown): void;
}

const nameOf = (p: PendingTransition) => p.after.metadata.name as string;

/**
 * Records transitions in batches. Calls made together (in one turn of the event loop) form one batch;
 * up to `writers` batches are written at once, and calls that arrive while all are busy wait and form
 * the next (at most `maxBatch` each). A session's transitions are recorded in the order of the calls: a
 * batch never holds two of one session, nor one of a session whose earlier transition is still being
 * written. A batch that fails is written again one transition at a time, so one bad transition costs
 * the others nothing.
 */
export class TransitionLog {
  readonly #db: Knex;
  readonly #log: Logger;
  readonly #maxBatch: number;
  readonly #maxWriters: number;
  #pending: PendingTransition[] = [];
  /** Sessions with a transition in a batch being written. */
  readonly #writing = new Set<string>();
  #writers = 0;
  #scheduled = false;
  /** Transactions written (batches and single retries): for tests and the bench. */
  transactions = 0;
  /** This worker's fencing term (worker_fence), once it leads: interim records check it. */
  term: number | undefined;

  constructor(db: Knex, log: Logger, opts: { maxBatch?: number; writers?: number } = {}) {
    this.#db = db;
    this.#log = log;
    this.#maxBatch = opts.maxBatch ?? 500;
    this.#maxWriters = opts.writers ?? 4;
  }

  record(before: Session, after: Session, interim?: InterimStatus): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ before, after, ...(interim ? { interim } : {}), resolve, reject });
      if (this.#scheduled) return;
      this.#scheduled = true;
      queueMicrotask(() => {
        this.#scheduled = false;
        this.#pump();
      });
    });
  }

  #pump(): void {
    while (this.#writers < this.#maxWriters) {
      const batch = this.#take();
      if (batch.length === 0) return;
      this.#writers++;
      void this.#flush(batch).finally(() => {
        this.#writers--;
        for (const p of batch) this.#writing.delete(nameOf(p));
        this.#pump();
      });
    }
  }

  #take(): PendingTransition[] {
    const batch: PendingTransition[] = [];
    const rest: PendingTransition[] = [];
    for (const p of this.#pending) {
      const name = nameOf(p);
      // A session already in this batch or in one being written: its later transition waits.
      if (batch.length < this.#maxBatch && !this.#writing.has(name)) {
        batch.push(p);
        this.#writing.add(name);
      } else rest.push(p);
    }
    this.#pending = rest;
    return batch;
  }

  async #flush(batch: PendingTransition[]): Promise<void> {
    try {
      await this.#write(batch);
      for (const p of batch) p.resolve();
    } catch (err) {
      // One by one helps only when one transition spoiled the batch (a fenced-off interim record spoils
      // it for the resource's records beside it); an unreachable database would make each wait its own
      // connection timeout.
      if (batch.length === 1 || isDatabaseUnreachable(err)) {
        for (const p of batch) p.reject(err);
        return;
      }
      this.#log.warn({ err: String(err), transitions: batch.length }, "a batch of transitions failed; one by one");
      for (const p of batch) {
        try {
          await this.#write([p]);
          p.resolve();
        } catch (e) {
          p.reject(e);
        }
      }
    }
  }

  async #write(batch: readonly PendingTransition[]): Promise<void> {
    this.transactions++;
    await this.#db.transaction(async (tx) => {
      // Held (FOR SHARE) until commit: a new leader's fence waits for this record, then sees it.
      if (this.term !== undefined && batch.some((p) => p.interim)) {
        const fence = (await tx("worker_fence").where({ id: 1 }).forShare().first("term")) as
          | { term: string }
          | undefined;
        const current = Number(fence?.term ?? 0);
        if (current !== this.term) throw new FencedOff(this.term, current);
      }
      const transitions = batch.map((p) => transitionOf(p.after, p.interim));
      const rows = await updateSessionsFromTransitions(tx, transitions, new Date());
      const byId = new Map(rows.map((r) => [r.id, r]));
      const events = batch.flatMap((p, i) => {
        const row = byId.get((transitions[i] as SessionTransition).id);
        if (!row) {
          this.#log.warn(
            { session: p.after.metadata.name },
            "a Session resource without a history row; its change is not recorded",
          );
          return [];
        }
        return [
          sessionEventOf("session.updated", row, viewFromResource(row, p.after), p.before.status?.phase ?? "Pending"),
        ];
      });
      // In the order of the calls: the stream's seqs follow it.
      await insertSessionEvents(tx, events);
      await notify(
        tx,
        batch.flatMap((p, i) => {
          const row = byId.get((transitions[i] as SessionTransition).id);
          return row ? bellFor(p.before, p.after, row) : [];
        }),
      );
    });
  }
}

/** Pause reasons the owner did not choose, as notifications name them. */
const PAUSED_BECAUSE: Record<string, string> = {
  [SessionReason.InsufficientCredits]: "credits",
  [SessionReason.MemberRemoved]: "member_removed",
};

/**
 * The owner's notification for a phase change they did not make: failed, or paused by the system. A
 * user's own pause tells them nothing; an administrator's is notified by the pause itself
 * (domain/sessions/pauseSession.ts). Keyed per session, so billing's own "paused for credits" and this
 * one are a single notification.
 */
export function bellFor(before: Session, after: Session, row: SessionRow): NewNotification[] {
  const phase = after.status?.phase;
  if (phase === before.status?.phase) return [];
  const name = row.display_name ?? row.id;
  const base = { userId: row.owner_id, organizationId: row.organization_id, at: new Date() };
  if (phase === "Failed") {
    const why = leadingCondition(after.status?.conditions)?.message ?? "";
    return [
      {
        ...base,
        kind: "session.failed",
        title: "Session failed",
        body: `Your session ${name} failed.${why ? ` ${why.slice(0, 500)}` : ""}`,
        data: { session_id: row.id, reason: leadingCondition(after.status?.conditions)?.reason ?? null },
        dedupeKey: `session.failed:${row.id}`,
      },
    ];
  }
  const reason = PAUSED_BECAUSE[after.metadata.annotations?.[PAUSE_REASON_ANNOTATION] ?? ""];
  if (phase === "Paused" && reason)
    return [
      {
        ...base,
        kind: "session.paused",
        title: "Session paused",
        body:
          reason === "credits"
            ? `Your session ${name} was paused because its credits ran out. Its volumes are kept.`
            : `Your session ${name} was paused because you were removed from its organization.`,
        data: { session_id: row.id, reason },
        dedupeKey: `session.paused:${row.id}`,
      },
    ];
  return [];
}

export function createWorkerStore(db: Knex, log: Logger, parts: Pick<SessionStore, "fairShare"> = {}): SessionStore {
  const transitions = new TransitionLog(db, log);
  return {
    ...parts,
    async clusters(): Promise<ClusterRecord[]> {
      return (await clusterLiveness(db)).map((c) => ({
        id: c.id,
        registered: c.deregistered_at === null,
        lastReportAt: c.last_report_at,
      }));
    },
    inventory: () => placementInventory(db),
    nodePools: () => nodePoolRefs(db),
    async reports(sessionIds?: readonly string[]): Promise<StoredReport[]> {
      return (await statusReports(db, sessionIds)).map((r) => ({
        clusterId: r.cluster_id,
        sessionId: r.session,
        phase: r.phase,
        node: r.node,
        gpuDevices: Array.isArray(r.gpu_devices) ? r.gpu_devices.map(String) : null,
        reason: r.reason,
        message: r.message,
        revision: Number(r.observed_generation ?? 0),
        at: new Date(r.at).toISOString(),
      }));
    },
    mirrorStates: (ids): Promise<Map<string, MirrorState>> => mirrorStates(db, ids),
    recordedPhases: (ids) => recordedPhases(db, ids),
    nextMirrorRevision: (id, restarts) => nextMirrorRevision(db, id, restarts),
    nextMirrorRevisions: (ids) => nextMirrorRevisions(db, ids),

    recordTransition: (before: Session, after: Session, interim?: InterimStatus): Promise<void> =>
      transitions.record(before, after, interim),
    async fence(): Promise<void> {
      const { rows } = (await db.raw(
        `INSERT INTO worker_fence (id, term) VALUES (1, 1)
         ON CONFLICT (id) DO UPDATE SET term = worker_fence.term + 1 RETURNING term`,
      )) as { rows: { term: string }[] };
      transitions.term = Number(rows[0]?.term);
    },
    async interimStatuses(): Promise<Map<string, InterimStatus>> {
      const rows = (await db("sessions")
        .whereNotNull("interim_status")
        .whereNull("resource_deleted_at")
        .select("id", "interim_status")) as { id: string; interim_status: InterimStatus }[];
      return new Map(rows.map((r) => [r.id, r.interim_status]));
    },

    async recordDeleted(session: Session): Promise<void> {
      const id = sessionIdOf(session.metadata.name as string);
      const [row] = (await db("sessions")
        .where({ id })
        .update({ resource_deleted_at: new Date(), updated_at: new Date() })
        .returning("*")) as SessionRow[];
      await deleteStatusReports(db, id);
      const r = row ?? (await findSessionById(db, id));
      if (r)
        await insertSessionEvents(db, [
          sessionEventOf("session.deleted", r, { ...viewFromResource(r, session), resourceDeleted: true }),
        ]);
    },

    async listen(handlers) {
      type Conn = {
        query(sql: string): Promise<unknown>;
        on(e: string, f: (x: never) => void): void;
        removeListener(e: string, f: (x: never) => void): void;
      };
      let stopped = false;
      /** The LISTEN connection and how to take our listeners off it (knex's own stay: they handle its end). */
      let conn: { c: Conn; detach(): void } | undefined;
      let pendingIds = new Set<string>();
      let timer: NodeJS.Timeout | undefined;
      const flushIds = () => {
        timer = undefined;
        const ids = [...pendingIds];
        pendingIds = new Set();
        if (ids.length > 0) handlers.reports(ids);
      };
      let retry: NodeJS.Timeout | undefined;
      let reconnecting = false;
      // Until it holds again, however long Postgres is away: without LISTEN every step of every session
      // waits for the resync (60 s) instead of following its report within milliseconds. One loop at a
      // time (a broken connection can say so more than once), or a second LISTEN connection would leak.
      const attempt = (delayMs: number) => {
        retry = setTimeout(() => {
          retry = undefined;
          if (stopped) return;
          connect().then(
            () => {
              reconnecting = false;
              if (!stopped) handlers.inventory(); // what changed while away
            },
            (err: unknown) => {
              if (stopped) return;
              const next = Math.min(delayMs * 2, 30_000);
              log.warn({ err: String(err), retryInMs: next }, "LISTEN again failed");
              attempt(next);
            },
          );
        }, delayMs);
      };
      const reconnect = () => {
        if (stopped || reconnecting) return;
        reconnecting = true;
        attempt(1000);
      };
      const release = (c: Conn) => db.client.releaseConnection(c).catch(() => {});
      const connect = async (): Promise<void> => {
        const c = (await db.client.acquireConnection()) as Conn;
        const onNotification = (msg: { channel: string; payload?: string }) => {
          if (msg.channel === "berth_inventory") handlers.inventory();
          else if (msg.channel === "berth_session_reports" && msg.payload) {
            pendingIds.add(msg.payload);
            timer ??= setTimeout(flushIds, 5);
          }
        };
        let detached = false;
        const detach = () => {
          if (detached) return;
          detached = true;
          c.removeListener("notification", onNotification as never);
          c.removeListener("error", onError as never);
        };
        const onError = (err: Error) => {
          log.warn({ err: String(err) }, "the worker's LISTEN connection failed; reconnecting");
          detach();
          if (conn?.c === c) conn = undefined;
          void release(c);
          reconnect();
        };
        c.on("notification", onNotification as never);
        c.on("error", onError as never);
        try {
          await c.query("LISTEN berth_session_reports");
          await c.query("LISTEN berth_inventory");
        } catch (err) {
          if (!detached) {
            detach();
            await release(c);
          }
          throw err;
        }
        if (stopped) {
          detach();
          await release(c);
          return;
        }
        conn = { c, detach };
      };
      try {
        await connect();
      } catch (err) {
        // Nobody will stop this listener: no loop may outlive the failed start.
        stopped = true;
        clearTimeout(retry);
        throw err;
      }
      return async () => {
        stopped = true;
        clearTimeout(timer);
        clearTimeout(retry);
        const current = conn;
        conn = undefined;
        if (current) {
          current.detach();
          await current.c.query("UNLISTEN *").catch(() => {});
          await db.client.releaseConnection(current.c);
        }
      };
    },

    purgeEvents: (olderThan) => purgeSessionEvents(db, olderThan),

    async pendingRows(since, before) {
      const rows = await pendingSessionRows(db, since, before);
      return rows.map((r) => ({ id: r.id, namespace: r.namespace, name: r.cr_name }));
    },

    async failUnmadeCreate(id, message, at) {
      const row = await failPendingSession(db, id, message, at);
      if (!row) return false;
      await insertSessionEvents(db, [sessionEventOf("session.updated", row, viewFromRow(row))]);
      return true;
    },

    // System settings (PATCH /api/v1/system/settings): the next pass places by the new policy.
    placementPolicy: async () => (await readSystemSettings(db)).placement.policy,
  };
}
