// Leader election decisions, free of I/O. The rules are client-go's (leaderelection.go):
// - Expiry is judged by the follower's own clock: a lease is expired when its record (holder, renew time)
//   has not changed for leaseDuration since this replica *observed* it change — never by comparing the
//   lease's renewTime with the local clock, which would trust clocks of two machines to agree.
// - A holder renews its own lease even after it expired, as long as nobody took it (optimistic
//   concurrency on resourceVersion decides races).
// - An empty holder (a released lease) may be taken at once.

export interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number | null;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number | null;
}

/** What this replica last saw of the lease, and when (its own clock) it last saw the record change. */
export interface Observation {
  record: string;
  changedAt: number;
}

export function recordOf(spec: LeaseSpec): string {
  return JSON.stringify([
    spec.holderIdentity ?? "",
    spec.renewTime ?? "",
    spec.acquireTime ?? "",
    spec.leaseTransitions ?? 0,
  ]);
}

export function observe(prev: Observation | undefined, spec: LeaseSpec, now: number): Observation {
  const record = recordOf(spec);
  return prev && prev.record === record ? prev : { record, changedAt: now };
}

export type Decision =
  | { action: "renew" }
  | { action: "acquire"; takeover: boolean }
  | { action: "wait"; holder: string; expiresInMs: number };

export function decide(
  spec: LeaseSpec,
  obs: Observation,
  identity: string,
  now: number,
  leaseDurationMs: number,
): Decision {
  const holder = spec.holderIdentity ?? "";
  if (holder === identity) return { action: "renew" };
  if (holder === "") return { action: "acquire", takeover: false };
  const expiresInMs = obs.changedAt + leaseDurationMs - now;
  if (expiresInMs > 0) return { action: "wait", holder, expiresInMs };
  return { action: "acquire", takeover: true };
}

/** Lease times are MicroTime: RFC 3339 with exactly six fractional digits (the apiserver insists). */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

/** The spec this replica writes when it acquires or renews. */
export function nextSpec(
  current: LeaseSpec | undefined,
  identity: string,
  now: number,
  leaseDurationMs: number,
): LeaseSpec {
  const holding = current?.holderIdentity === identity;
  const transitions = current?.leaseTransitions ?? 0;
  return {
    holderIdentity: identity,
    leaseDurationSeconds: Math.max(1, Math.ceil(leaseDurationMs / 1000)),
    acquireTime: holding && current?.acquireTime ? current.acquireTime : microTime(now),
    renewTime: microTime(now),
    // Counts changes of holder; a first acquisition of a new or released lease is not a transition.
    leaseTransitions: holding || !current?.holderIdentity ? transitions : transitions + 1,
  };
}

/** The spec a leader writes when it steps down cleanly, so a follower may take over at once. */
export function releasedSpec(current: LeaseSpec, now: number): LeaseSpec {
  return { ...current, holderIdentity: null, leaseDurationSeconds: 1, renewTime: microTime(now) };
}
