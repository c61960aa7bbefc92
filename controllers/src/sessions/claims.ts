// Idle claims go: a volume's claim that no session has used for `idleMs` is deleted on its cluster (the
// data stays on the pool: the bed's and real installs' volumes are Retain) and the volume's status
// forgets the cluster, so its next session may land anywhere its pool is shared with. A deleted volume's
// claim goes at once, and once its grace period is over its data goes (purgeDue). Pure decisions here;
// claims-pass.ts does the writes.
import { ANNOTATIONS, type Session, type Volume } from "@berth/crds";

/** A deleted volume kept for its grace period: when its data goes (ms), else undefined. */
export function purgeAfter(vol: Volume): number | undefined {
  const v = vol.metadata.annotations?.[ANNOTATIONS.volumePurgeAfter];
  const t = v ? Date.parse(v) : Number.NaN;
  return Number.isFinite(t) ? t : undefined;
}

/** Deleted volumes whose grace period is over and whose claim is gone: their data goes now. */
export function purgeDue(volumes: Iterable<[string, Volume]>, now: number): string[] {
  const out: string[] = [];
  for (const [key, vol] of volumes) {
    const t = purgeAfter(vol);
    if (t !== undefined && t <= now && !vol.status?.boundCluster) out.push(key);
  }
  return out;
}

/** Phases in which a session holds (or is about to hold) a pod that mounts its volumes. */
const HOLDS = new Set(["Pending", "Queued", "Starting", "Running", "Resuming", "Restarting", "Pausing", "Unknown"]);

export function holdsVolumes(s: Session): boolean {
  if (s.spec.desiredState === "Terminated") return false;
  const phase = s.status?.phase ?? "Pending";
  return HOLDS.has(phase);
}

/**
 * Volumes (namespace/name) whose claim is idle past `idleMs`, and those whose release began (marked
 * `releasingSince`: it is finished whatever else happened meanwhile, since the claim may be gone already).
 * `lastUsed` is the caller's memory of when each volume was last seen in use; it is updated here (in use:
 * now; first seen idle: from the `releaseAfter` recorded earlier, else the time the claim was recorded,
 * else now). `marks`, when given, receives the `releaseAfter` each bound volume should show where it differs
 * from its status (null: a session uses it again).
 */
export function idleClaims(
  volumes: Iterable<[string, Volume]>,
  sessions: Iterable<Session>,
  lastUsed: Map<string, number>,
  now: number,
  idleMs: number,
  marks?: Map<string, string | null>,
): string[] {
  const inUse = new Set<string>();
  for (const s of sessions)
    if (holdsVolumes(s)) for (const v of s.spec.volumes) inUse.add(`${s.metadata.namespace}/${v.volume}`);
  const out: string[] = [];
  for (const [key, vol] of volumes) {
    if (!vol.status?.boundCluster) {
      lastUsed.delete(key);
      continue;
    }
    if (vol.status.releasingSince) {
      out.push(key);
      continue;
    }
    if (inUse.has(key)) {
      lastUsed.set(key, now);
      if (vol.status.releaseAfter) marks?.set(key, null);
      continue;
    }
    // Deleted (kept only for its grace period): its claim goes at once.
    if (purgeAfter(vol) !== undefined) {
      out.push(key);
      continue;
    }
    let since = lastUsed.get(key);
    if (since === undefined) {
      const promised = Date.parse(vol.status.releaseAfter ?? "") - idleMs;
      const recorded = Date.parse(vol.status.lastUsedAt ?? "");
      since = Number.isFinite(promised) ? promised : Number.isFinite(recorded) ? Math.min(recorded, now) : now;
      lastUsed.set(key, since);
    }
    if (now - since >= idleMs) out.push(key);
    else {
      const at = new Date(since + idleMs).toISOString();
      if (vol.status.releaseAfter !== at) marks?.set(key, at);
    }
  }
  return out;
}
