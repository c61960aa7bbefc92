// The worker's SessionStore (controllers/src/sessions/store.ts) over Postgres: reads of what operators
// reported, the history rows and the stream's events. LISTENs for report and inventory notifications
// (triggers of migration 20261122000004) on one dedicated connection, reconnecting when it drops.

import type { ClusterRecord, MirrorState, SessionStore, StoredReport } from "@berth/controllers";
import type { Session } from "@berth/crds";
import type { Knex } from "knex";
import type { Logger } from "pino";
import { findSessionById } from "../../db/operations/sessions/findSessionById.ts";
import { insertSessionEvents, purgeSessionEvents } from "../../db/operations/sessions/sessionEvents.ts";
import type { SessionRow } from "../../db/operations/sessions/types.ts";
import { mirrorStates, nextMirrorRevision } from "../../db/operations/sessions/updateSession.ts";
import {
  clusterLiveness,
  deleteStatusReports,
  inventoryNodes,
  statusReports,
} from "../../db/operations/sessions/workerQueries.ts";
import { sessionEventOf } from "./events.ts";
import { leadingCondition, viewFromResource } from "./view.ts";

const ts = (s: string | undefined) => (s ? new Date(s) : null);

export function createWorkerStore(db: Knex, log: Logger): SessionStore {
  return {
    async clusters(): Promise<ClusterRecord[]> {
      return (await clusterLiveness(db)).map((c) => ({
        id: c.id,
        registered: c.deregistered_at === null,
        lastReportAt: c.last_report_at,
      }));
    },
    async inventory() {
      return (await inventoryNodes(db)).map((n) => ({
        clusterId: n.cluster_id,
        name: n.name,
        gpuModel: n.gpu_model,
        gpuAllocatable: n.gpu_allocatable,
        gpuInUse: n.gpu_in_use,
        schedulable: n.schedulable,
        ready: n.ready,
      }));
    },
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
    nextMirrorRevision: (id, restarts) => nextMirrorRevision(db, id, restarts),

    async recordTransition(before: Session, after: Session): Promise<void> {
      const id = (after.metadata.name as string).replace("-", "_");
      const st = after.status ?? {};
      const lead = leadingCondition(st.conditions);
      await db.transaction(async (tx) => {
        const changes: Record<string, unknown> = {
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
          updated_at: new Date(),
          ...(st.gpuModel ? { gpu_model: st.gpuModel } : {}),
        };
        if (st.cluster) {
          changes.cluster_id = st.cluster;
          changes.placed_clusters = tx.raw(
            "CASE WHEN ? = ANY(placed_clusters) THEN placed_clusters ELSE array_append(placed_clusters, ?) END",
            [st.cluster, st.cluster],
          );
        }
        const [row] = (await tx("sessions").where({ id }).update(changes).returning("*")) as SessionRow[];
        if (!row) {
          log.warn({ session: id }, "a Session resource without a history row; its change is not recorded");
          return;
        }
        await insertSessionEvents(tx, [
          sessionEventOf("session.updated", row, viewFromResource(row, after), before.status?.phase ?? "Pending"),
        ]);
      });
    },

    async recordDeleted(session: Session): Promise<void> {
      const id = (session.metadata.name as string).replace("-", "_");
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
      let stopped = false;
      let conn:
        | {
            query(sql: string): Promise<unknown>;
            on(e: string, f: (x: never) => void): void;
            removeAllListeners(e?: string): void;
          }
        | undefined;
      let pendingIds = new Set<string>();
      let timer: NodeJS.Timeout | undefined;
      const flushIds = () => {
        timer = undefined;
        const ids = [...pendingIds];
        pendingIds = new Set();
        if (ids.length > 0) handlers.reports(ids);
      };
      const connect = async (): Promise<void> => {
        const c = (await db.client.acquireConnection()) as NonNullable<typeof conn>;
        c.on("notification", ((msg: { channel: string; payload?: string }) => {
          if (msg.channel === "berth_inventory") handlers.inventory();
          else if (msg.channel === "berth_session_reports" && msg.payload) {
            pendingIds.add(msg.payload);
            timer ??= setTimeout(flushIds, 5);
          }
        }) as never);
        c.on("error", ((err: Error) => {
          log.warn({ err: String(err) }, "the worker's LISTEN connection failed; reconnecting");
          const broken = conn;
          conn = undefined;
          if (broken) void db.client.releaseConnection(broken).catch(() => {});
          if (!stopped) setTimeout(() => void connect().catch(() => {}), 1000);
        }) as never);
        await c.query("LISTEN berth_session_reports");
        await c.query("LISTEN berth_inventory");
        conn = c;
      };
      await connect();
      return async () => {
        stopped = true;
        clearTimeout(timer);
        const c = conn;
        conn = undefined;
        if (c) {
          c.removeAllListeners("notification");
          await c.query("UNLISTEN *").catch(() => {});
          await db.client.releaseConnection(c);
        }
      };
    },

    purgeEvents: (olderThan) => purgeSessionEvents(db, olderThan),
  };
}
