// Cluster health, a leader-only loop of the worker: a registered cluster whose operator has not reported
// for `unreachableAfterMs` (2 minutes by default; never reported: since registration) is marked unreachable,
// and marked reachable again at its next report. Each change is one transaction: the mark (whose trigger
// writes the fleet's cluster.unreachable / cluster.reachable webhook events) and, when it becomes
// unreachable, a critical notification to every super_admin (keyed by cluster: one while it is unread).
import { PeriodicPass } from "@berth/controllers/kube";
import type { Knex } from "knex";
import type { Logger } from "pino";
import type { Clock } from "../clock.ts";
import { markReachable, markUnreachable } from "../db/operations/clusters/markClusterHealth.ts";
import { activeSuperAdminIds } from "../db/operations/users/activeSuperAdminIds.ts";
import { notify } from "../domain/notifications/notify.ts";

export interface ClusterHealthOptions {
  /** Silence after which a cluster is unreachable; default 120 s. */
  unreachableAfterMs?: number;
  /** Default 10 s. */
  intervalMs?: number;
}

export class ClusterHealthLoop {
  readonly #db: Knex;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #o: Required<ClusterHealthOptions>;
  readonly #loop: PeriodicPass;

  constructor(o: { db: Knex; log: Logger; clock?: Clock } & ClusterHealthOptions) {
    this.#db = o.db;
    this.#log = o.log.child({ component: "cluster-health" });
    this.#clock = o.clock ?? { now: () => new Date() };
    this.#o = { unreachableAfterMs: o.unreachableAfterMs ?? 120_000, intervalMs: o.intervalMs ?? 10_000 };
    this.#loop = new PeriodicPass({
      intervalMs: this.#o.intervalMs,
      pass: () => this.pass(),
      onError: (err) => this.#log.warn({ err }, "cluster health pass failed; retried on the next pass"),
    });
  }

  start(): void {
    this.#loop.start();
  }

  async stop(): Promise<void> {
    await this.#loop.stop();
  }

  /** One pass: the clusters that became unreachable and those that are back. */
  async pass(): Promise<{ unreachable: string[]; reachable: string[] }> {
    const now = this.#clock.now();
    const cutoff = new Date(now.getTime() - this.#o.unreachableAfterMs);
    return this.#db.transaction(async (tx) => {
      const back = await markReachable(tx, cutoff);
      const lost = await markUnreachable(tx, cutoff, now);
      if (lost.length > 0) {
        const admins = await activeSuperAdminIds(tx);
        await notify(
          tx,
          lost.flatMap((c) =>
            admins.map((userId) => ({
              userId,
              organizationId: null,
              kind: "cluster.unreachable" as const,
              title: `Cluster ${c.name} is unreachable`,
              body: `Cluster ${c.name} (${c.id}) has not reported since ${(c.last_report_at ?? now).toISOString()}. Its sessions' state is unknown and nothing new is placed there until it reports again.`,
              data: { cluster_id: c.id, last_report_at: c.last_report_at?.toISOString() ?? null },
              dedupeKey: `cluster.unreachable:${c.id}`,
              at: now,
            })),
          ),
        );
      }
      for (const c of lost)
        this.#log.warn({ kind: "Cluster", name: c.id, lastReportAt: c.last_report_at }, "cluster unreachable");
      for (const c of back) this.#log.info({ kind: "Cluster", name: c.id }, "cluster reachable again");
      return { unreachable: lost.map((c) => c.id).sort(), reachable: back.map((c) => c.id).sort() };
    });
  }
}
