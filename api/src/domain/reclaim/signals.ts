// From what the cluster's sources reported (session_activity, activity_sources) to the three signals the
// plan reads. A signal is known only while its source reported recently (`staleMs`, default 3 minutes: the
// gateway and the operator report every 30 s): a gateway down, an operator restarting, GPU metrics
// missing or a notebook server not answering make it unknown, and the idle rule waits.
import type { ActivityRow } from "../../db/operations/reclaim/readActivity.ts";
import type { Signal, Signals } from "./plan.ts";

export const SIGNAL_STALE_MS = 3 * 60_000;

const inPeriod = (d: Date | null, periodStart: Date): Date | null => (d && d >= periodStart ? d : null);
const fresh = (d: Date | null | undefined, now: Date, staleMs: number) => !!d && now.getTime() - d.getTime() <= staleMs;

export function signalsOf(o: {
  row: ActivityRow | undefined;
  clusterId: string;
  sources: ReadonlyMap<string, Date>;
  now: Date;
  periodStart: Date;
  staleMs?: number;
}): Signals {
  const stale = o.staleMs ?? SIGNAL_STALE_MS;
  const r = o.row;
  const gateway = o.sources.get(`${o.clusterId}/gateway`);
  const traffic: Signal = fresh(gateway, o.now, stale)
    ? { state: "known", lastActiveAt: inPeriod(r?.cluster_id === o.clusterId ? r.user_active_at : null, o.periodStart) }
    : { state: "unknown", why: "the session gateway has not reported" };
  const gpu: Signal =
    r && r.cluster_id === o.clusterId && fresh(r.gpu_seen_at, o.now, stale)
      ? { state: "known", lastActiveAt: inPeriod(r.gpu_active_at, o.periodStart) }
      : { state: "unknown", why: "no GPU utilisation reading" };
  let notebook: Signal;
  if (!r || r.cluster_id !== o.clusterId || !fresh(r.notebook_seen_at, o.now, stale))
    notebook = { state: "unknown", why: "the notebook server's status is not known" };
  else if (r.notebook_state === "none") notebook = { state: "none" };
  else notebook = { state: "known", lastActiveAt: inPeriod(r.notebook_active_at, o.periodStart) };
  return { gpu, traffic, notebook };
}
