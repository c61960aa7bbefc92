// The dashboard (docs/dev/monitoring.md): summaries read from Berth's own inventory and ledger, never
// from the metrics server, so it renders while that is down. What a caller gets follows their role:
//   member          their running and paused sessions, GPU-hours and credits this period, the balance of
//                   their own wallets and the days it lasts at the rate of their running sessions
//   org/project admin  the same for themselves, plus sessions by phase, queue and spend of what they
//                   administer
//   super_admin     all of that fleet-wide, plus GPUs by cluster and model (total, allocated, free,
//                   allocated-but-idle), nodes cordoned or not ready, and the storage tile
// The period is the calendar month (UTC). With a cluster selected, fleet tiles narrow to it; the storage
// tile still reads the pools fleet-wide and says it is shared across clusters (contract, storage rule 3).
import type { Pool } from "@berth/crds";
import type { Db } from "../../db/knex.ts";
import { allocatedButIdle } from "../../db/operations/dashboard/allocatedButIdle.ts";
import { fleetByModel } from "../../db/operations/dashboard/fleetByModel.ts";
import { gpuSeconds } from "../../db/operations/dashboard/gpuSeconds.ts";
import { liveSessions } from "../../db/operations/dashboard/liveSessions.ts";
import { queueDepth } from "../../db/operations/dashboard/queueDepth.ts";
import { runningRate } from "../../db/operations/dashboard/runningRate.ts";
import type { SessionFilter } from "../../db/operations/dashboard/sessionFilter.ts";
import { sessionsByPhase } from "../../db/operations/dashboard/sessionsByPhase.ts";
import { spendByProject } from "../../db/operations/dashboard/spendByProject.ts";
import { troubledNodes } from "../../db/operations/dashboard/troubledNodes.ts";
import { userBalance } from "../../db/operations/dashboard/userBalance.ts";
import type { Principal } from "../identity/principal.ts";
import { scopeOf } from "../identity/scope.ts";
import type { PoolCapacity } from "../storage/capacity.ts";
import { type StorageTile, storageTile } from "./storageTile.ts";

/** Mean utilisation under this over the last IDLE_WINDOW_MINUTES marks a running session's GPUs idle. */
export const IDLE_BELOW_PERCENT = 5;
export const IDLE_WINDOW_MINUTES = 15;

export function periodOf(now: Date): { from: Date; to: Date } {
  const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { from, to };
}

export interface DashboardInput {
  db: Db;
  principal: Principal;
  now: Date;
  clusterId?: string | undefined;
  /** The pools with their capacity; undefined when the management cluster cannot be read. */
  pools: () => Promise<{ pool: Pool; capacity: PoolCapacity | null }[] | undefined>;
}

export async function dashboardOf(input: DashboardInput) {
  const { db, principal: p, now, clusterId } = input;
  const s = scopeOf(p);
  const period = periodOf(now);
  const own: SessionFilter = { ownerId: p.userId, ownerOrganizationIds: [...s.organizations] };
  // Every tile's queries start at once (none needs another's answer): the page waits for the slowest one,
  // not for the sum of three rounds (bench/src/monitoring.ts).
  const isAdmin = p.isSuperAdmin || s.adminOrganizations.size > 0 || s.adminProjects.size > 0;
  const scope: SessionFilter = p.isSuperAdmin
    ? { all: true, ...(clusterId ? { clusterId } : {}) }
    : {
        organizationIds: [...s.adminOrganizations],
        projectIds: [...s.adminProjects],
        ...(clusterId ? { clusterId } : {}),
      };
  const adminTiles = isAdmin
    ? Promise.all([sessionsByPhase(db, scope), queueDepth(db, scope), spendByProject(db, scope, period.from)])
    : undefined;
  const superTiles = p.isSuperAdmin
    ? Promise.all([fleetOf(db, now, clusterId), troubledNodes(db, 20, clusterId), input.pools().catch(() => undefined)])
    : undefined;
  // Settled here so that a failure of the first awaited group leaves no rejection unhandled.
  adminTiles?.catch(() => undefined);
  superTiles?.catch(() => undefined);
  const [mine, paused, seconds, spend, balance, rate] = await Promise.all([
    liveSessions(db, own, ["Running", "Starting", "Resuming", "Restarting"], 20),
    liveSessions(db, own, ["Paused", "Pausing"], 20),
    gpuSeconds(db, own, period.from),
    spendByProject(db, own, period.from),
    userBalance(db, p.userId, [...s.organizations]),
    runningRate(db, own),
  ]);
  const spent = spend.reduce((a, r) => a + BigInt(r.spent), 0n);
  const me = {
    running: mine,
    paused,
    period: { from: period.from, to: period.to, gpu_hours: seconds / 3600, credits_spent: spent.toString() },
    balance: balance.toString(),
    hourly_rate: rate.toString(),
    /** null when nothing runs (the balance is not being drawn on). */
    days_left: rate > 0n ? Number((balance * 100n) / (rate * 24n)) / 100 : null,
  };

  if (!adminTiles) return { view: "member" as const, me, admin: null };
  const [phases, queue, orgSpend] = await adminTiles;
  const admin = {
    sessions_by_phase: phases,
    queue: {
      depth: queue.depth,
      oldest_wait_seconds: queue.oldest
        ? Math.max(0, Math.round((now.getTime() - new Date(queue.oldest).getTime()) / 1000))
        : null,
    },
    spend: orgSpend,
    fleet: null as null | Awaited<ReturnType<typeof fleetOf>>,
    nodes: null as null | Awaited<ReturnType<typeof troubledNodes>>,
    storage: null as StorageTile | null,
  };
  if (superTiles) {
    const [fleet, nodes, pools] = await superTiles;
    admin.fleet = fleet;
    admin.nodes = nodes;
    admin.storage = storageTile(pools, clusterId);
  }
  return { view: p.isSuperAdmin ? ("super_admin" as const) : ("admin" as const), me, admin };
}

async function fleetOf(db: Db, now: Date, clusterId: string | undefined) {
  const since = new Date(now.getTime() - IDLE_WINDOW_MINUTES * 60_000);
  const [rows, idle] = await Promise.all([
    fleetByModel(db, clusterId),
    allocatedButIdle(db, since, IDLE_BELOW_PERCENT, clusterId),
  ]);
  const idleOf = new Map(idle.map((i) => [`${i.cluster_id}/${i.gpu_model}`, i.gpus]));
  return rows.map((r) => ({
    ...r,
    allocated_idle: Math.min(r.allocated, idleOf.get(`${r.cluster_id}/${r.gpu_model}`) ?? 0),
  }));
}
