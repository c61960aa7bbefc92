// The worker's SessionStore (controllers/src/sessions/store.ts) over Postgres: reads of what operators
// reported, the history rows and the stream's events. LISTENs for report and inventory notifications
// (triggers of migration 20261122000004) on one dedicated connection, reconnecting when it drops.
//
// Transitions are written in batches by TransitionLog (transitionLog.ts), what each writes decided by
// transitionPlan.ts (the history row's fields, the owner's notification).
import type { ClusterRecord, MirrorState, SessionStore, StoredReport } from "@berth/controllers";
import { type InterimStatus, type Session, sessionIdOf } from "@berth/crds";
import type { Knex } from "knex";
import type { Logger } from "pino";
import { nodePoolRefs } from "../db/operations/nodePools/nodePools.ts";
import { findSessionById } from "../db/operations/sessions/findSessionById.ts";
import { insertSessionEvents, purgeSessionEvents } from "../db/operations/sessions/sessionEvents.ts";
import type { SessionRow } from "../db/operations/sessions/types.ts";
import { failPendingSession, pendingSessionRows } from "../db/operations/sessions/unmadeCreates.ts";
import {
  mirrorStates,
  nextMirrorRevision,
  nextMirrorRevisions,
  recordedPhases,
} from "../db/operations/sessions/updateSession.ts";
import { viewFromResource, viewFromRow } from "../db/operations/sessions/view.ts";
import {
  clusterLiveness,
  deleteStatusReports,
  placementInventory,
  statusReports,
} from "../db/operations/sessions/workerQueries.ts";
import { sessionEventOf } from "../domain/sessions/events.ts";
import { readSystemSettings } from "../domain/settings/settings.ts";
import { TransitionLog } from "./transitionLog.ts";

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
