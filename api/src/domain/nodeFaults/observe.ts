// Hardware faults cordon a node (docs/dev/node-pools.md). Every GPU metrics round an operator forwards is
// read here for fault counters before it goes on to the metrics server, so the rule works with no metrics
// server at all. An increase of a counter is a fault (a counter that went down was reset: its value is
// new). A node's first round is its baseline: counters it had before Berth watched it are history, not
// news. A series that appears later on a watched node (an XID code seen for the first time) counts whole.
// When the faults the rule counts reach its threshold within its window (none before the node's last
// uncordon), Berth cordons or drains the node with the cluster's credential, as an administrator would,
// and says so: a notification to every super_admin, one to each owner of a session there, and the
// action's `node.cordoned` (or `node.drained`) webhook with the reason.
import type { Knex } from "knex";
import { activeSuperAdminIds } from "../../db/operations/users/activeSuperAdminIds.ts";
import type { Deps } from "../../deps.ts";
import { carryOutNodeAction } from "../clusters/nodeActions.ts";
import { notify } from "../notifications/notify.ts";
import type { HardwareFaultSettings } from "../settings/schemas.ts";
import { readSystemSettings } from "../settings/settings.ts";
import { type FaultReading, faultReadings } from "./readings.ts";

export interface FaultOutcome {
  /** Faults counted from this round. */
  faults: number;
  /** Nodes the rule cordoned (or drained) now. */
  cordoned: string[];
}

interface NewFault {
  cluster_id: string;
  node_name: string;
  gpu_uuid: string;
  kind: "xid" | "ecc_dbe";
  code: number | null;
  count: number;
  at: Date;
}

/** Records the round's counters; returns the faults they show. One round per cluster at a time (row locks). */
async function recordCounters(tx: Knex, clusterId: string, readings: FaultReading[], at: Date): Promise<NewFault[]> {
  const nodes = [...new Set(readings.map((r) => r.node))];
  const rows = (await tx("node_fault_counters")
    .where({ cluster_id: clusterId })
    .whereIn("node_name", nodes)
    .forUpdate()
    .select("node_name", "gpu_uuid", "series", "value")) as {
    node_name: string;
    gpu_uuid: string;
    series: string;
    value: number;
  }[];
  const known = new Map(rows.map((r) => [`${r.node_name}|${r.gpu_uuid}|${r.series}`, r.value]));
  const watched = new Set(rows.map((r) => r.node_name));
  const faults: NewFault[] = [];
  for (const r of readings) {
    const before = known.get(`${r.node}|${r.uuid}|${r.series}`);
    const count =
      before === undefined ? (watched.has(r.node) ? r.value : 0) : r.value >= before ? r.value - before : r.value;
    if (count > 0)
      faults.push({
        cluster_id: clusterId,
        node_name: r.node,
        gpu_uuid: r.uuid,
        kind: r.kind,
        code: r.code,
        count: Math.round(count),
        at,
      });
  }
  await tx("node_fault_counters")
    .insert(
      readings.map((r) => ({
        cluster_id: clusterId,
        node_name: r.node,
        gpu_uuid: r.uuid,
        series: r.series,
        value: r.value,
        seen_at: at,
      })),
    )
    .onConflict(["cluster_id", "node_name", "gpu_uuid", "series"])
    .merge(["value", "seen_at"]);
  if (faults.length > 0) await tx("node_fault_events").insert(faults);
  return faults;
}

/** The faults the rule counts on the node within its window, after its last uncordon. */
async function countedFaults(db: Knex, clusterId: string, node: string, rule: HardwareFaultSettings, now: Date) {
  const lastUncordon = (await db("cluster_node_actions")
    .where({ cluster_id: clusterId, node_name: node, action: "uncordon" })
    .whereIn("outcome", ["success", "partial"])
    .max("at as at")
    .first()) as { at: Date | null } | undefined;
  const windowStart = new Date(now.getTime() - rule.window_minutes * 60_000);
  const since = lastUncordon?.at && lastUncordon.at > windowStart ? lastUncordon.at : windowStart;
  const rows = (await db("node_fault_events")
    .where({ cluster_id: clusterId, node_name: node })
    .where("at", ">", since)
    .where((q) => {
      q.where((x) => x.where({ kind: "xid" }).whereIn("code", rule.xids));
      if (rule.ecc_double_bit) q.orWhere({ kind: "ecc_dbe" });
    })
    .groupBy("kind", "code", "gpu_uuid")
    .select("kind", "code", "gpu_uuid", db.raw("sum(count)::int as n"))) as {
    kind: string;
    code: number | null;
    gpu_uuid: string;
    n: number;
  }[];
  return rows;
}

export async function observeFaults(
  deps: Deps,
  clusterId: string,
  sources: readonly { text: string }[],
): Promise<FaultOutcome> {
  const readings = sources.flatMap((s) => faultReadings(s.text));
  if (readings.length === 0) return { faults: 0, cordoned: [] };
  const now = deps.clock.now();
  // One round per cluster at a time: a counter series seen for the first time has no row to lock, and two
  // rounds in flight would both count it. The decision marks the node unschedulable in the same
  // transaction (the cordon's own optimistic update, early), so the next round does not decide it again;
  // the cordon itself runs after the commit, holding no connection while the cluster answers.
  const decided = await deps.db.transaction(async (tx) => {
    await tx.raw("SELECT pg_advisory_xact_lock(hashtext(?))", [`node_faults:${clusterId}`]);
    const faults = await recordCounters(tx, clusterId, readings, now);
    const trips: { node: string; reason: string }[] = [];
    if (faults.length === 0) return { faults: 0, trips, rule: undefined };
    const rule = (await readSystemSettings(tx)).hardware_faults;
    for (const node of [...new Set(faults.map((f) => f.node_name))].sort()) {
      const counted = await countedFaults(tx, clusterId, node, rule, now);
      const total = counted.reduce((a, r) => a + r.n, 0);
      if (total < rule.threshold) continue;
      const marked = await tx("cluster_nodes")
        .where({ cluster_id: clusterId, name: node, schedulable: true })
        .update({ schedulable: false });
      if (marked === 0) continue; // not reported, or cordoned already
      const what = counted
        .map((r) => `${r.n} × ${r.kind === "xid" ? `XID ${r.code}` : "double-bit ECC"} on ${r.gpu_uuid}`)
        .join(", ");
      trips.push({
        node,
        reason: `hardware faults: ${what} within ${rule.window_minutes} min (rule: ${rule.threshold})`,
      });
    }
    return { faults: faults.reduce((a, f) => a + f.count, 0), trips, rule };
  });
  const { rule } = decided;
  if (rule) for (const t of decided.trips) await trip(deps, clusterId, t.node, rule, t.reason, now);
  return { faults: decided.faults, cordoned: decided.trips.map((t) => t.node) };
}

async function trip(
  deps: Deps,
  clusterId: string,
  node: string,
  rule: HardwareFaultSettings,
  reason: string,
  now: Date,
): Promise<void> {
  let done = true;
  try {
    await carryOutNodeAction(deps, null, clusterId, node, rule.action, reason);
  } catch (err) {
    // Recorded as a failed action; the administrators are told below that it still needs doing.
    done = false;
    deps.log.warn(
      { kind: "Node", cluster: clusterId, name: node, err: String(err) },
      "cordon for hardware faults failed",
    );
  }
  deps.log.warn(
    { kind: "Node", cluster: clusterId, name: node, action: rule.action, reason },
    "node cordoned for hardware faults",
  );
  const cluster = (await deps.db("clusters").where({ id: clusterId }).first("name")) as { name: string } | undefined;
  const where = `${node} of ${cluster?.name ?? clusterId}`;
  const sessions = (await deps
    .db("sessions")
    .where({ cluster_id: clusterId, node })
    .whereIn("phase", ["Starting", "Running", "Restarting", "Resuming", "Unknown"])
    .select("id", "owner_id", "organization_id", "display_name")) as {
    id: string;
    owner_id: string;
    organization_id: string;
    display_name: string | null;
  }[];
  await deps.db.transaction(async (tx) => {
    const admins = await activeSuperAdminIds(tx);
    await notify(tx, [
      ...admins.map((userId) => ({
        userId,
        organizationId: null,
        kind: "node.fault_cordoned" as const,
        title: done ? `Node ${where} was cordoned for hardware faults` : `Node ${where} has hardware faults: cordon it`,
        body: `${reason}. ${
          done
            ? rule.action === "drain"
              ? "Its session pods were evicted and the sessions are placed again elsewhere."
              : "Running sessions there were warned; nothing new is placed there."
            : "Berth could not cordon it (the cluster refused or did not answer)."
        } Uncordon it with a reason once it is repaired.`,
        data: {
          cluster_id: clusterId,
          node,
          reason,
          action: rule.action,
          carried_out: done,
          sessions: sessions.map((s) => s.id),
        },
        dedupeKey: `node.fault_cordoned:${clusterId}/${node}`,
        at: now,
      })),
      ...sessions.map((s) => ({
        userId: s.owner_id,
        organizationId: s.organization_id,
        kind: "session.node_fault" as const,
        title: `${s.display_name ?? s.id}: its node has hardware faults`,
        body:
          rule.action === "drain"
            ? `The GPU node ${node} reported hardware faults and was drained: the session is being placed again on another node. Unsaved work in memory is lost.`
            : `The GPU node ${node} reported hardware faults and was cordoned. The session keeps running, but its GPU may fail: save your work and restart it to move it to another node.`,
        data: { session_id: s.id, cluster_id: clusterId, node, action: rule.action },
        dedupeKey: `session.node_fault:${s.id}:${node}`,
        at: now,
      })),
    ]);
  });
}
