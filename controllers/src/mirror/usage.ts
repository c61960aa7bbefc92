// Usage metering on the GPU cluster: every session pod's running time becomes usage samples on a fixed
// grid of intervals (epoch-aligned, `intervalMs` long), which the control plane charges once each.
//
// - A pod is metered from its container's start (status, apiserver clock) to the moment its deletion was
//   asked for (deletionTimestamp − grace: a pause stops the charge at once, not 30 s later), or its
//   containers' finish when it ended on its own. Pending time (scheduling, image pull) costs nothing.
// - A sample covers the part of one interval the pod ran: id `<pod uid>:<interval length s>:<interval
//   start s>`, the same whoever computes it, so a retry, a restarted operator or a new leader resends the
//   same ids and the control plane drops them as duplicates. A closed interval is sent `graceMs` after its
//   end; the last, partial interval as soon as the pod's end is known (a pause is billed to the second).
// - What was acknowledged is remembered per pod and advances only on success: nothing is lost while the
//   control plane is away, and a new leader simply starts again from each pod's start.
// - GPU utilisation and memory, when the cluster exposes them (a `GpuUsageSource`, e.g. the operator's
//   DCGM exporter scrape), are the pod's average over the sample's own span; without a source, or without a
//   reading in that span, a sample has no such fields (absent, never zero: zero would claim an idle GPU).
import { migResourcesOf } from "@berth/crds";
import type { PodView } from "./plan.ts";

export interface UsageSample {
  id: string;
  session: string;
  start: string;
  end: string;
  gpu_seconds: number;
  gpu_utilization?: number | null;
  gpu_memory_mib?: number | null;
}

/** What metering needs of a pod. */
export interface MeteredPodView extends PodView {
  spec?: PodView["spec"] & {
    containers?: { name: string; resources?: { limits?: Record<string, string> } }[];
  };
  status?: PodView["status"] & {
    containerStatuses?: {
      name: string;
      state?: {
        running?: { startedAt?: string };
        terminated?: { startedAt?: string; finishedAt?: string };
      };
      lastState?: { terminated?: { startedAt?: string } };
    }[];
  };
}

/** One pod's run as metered: when it started (ms) and, once known, when it stopped. */
export interface PodRun {
  uid: string;
  session: string;
  /** Where the pod is: how GPU metrics name it (by namespace and pod name, not uid). */
  namespace?: string;
  name?: string;
  gpus: number;
  startMs?: number;
  endMs?: number;
}

const GPU = "nvidia.com/gpu";

function time(s: string | undefined): number | undefined {
  const t = s ? Date.parse(s) : Number.NaN;
  return Number.isFinite(t) ? t : undefined;
}

/**
 * The run a pod shows: start = the earliest container start it still reports (a restarted container's
 * previous start is in lastState), end = its deletion request or, for a pod that ended, its last finish.
 * Undefined for a pod that is not a session's (no uid or session id).
 */
export function podRun(pod: MeteredPodView, sessionLabel: string): PodRun | undefined {
  const uid = pod.metadata.uid;
  const session = pod.metadata.labels?.[sessionLabel];
  if (!uid || !session) return undefined;
  // A MIG instance is the session's GPU as it sees one (crds/src/mig.ts): it meters like a card.
  const gpus = (pod.spec?.containers ?? []).reduce(
    (n, c) =>
      n +
      (Number(c.resources?.limits?.[GPU] ?? 0) || 0) +
      Object.values(migResourcesOf(c.resources?.limits as Record<string, string> | undefined)).reduce(
        (a, k) => a + k,
        0,
      ),
    0,
  );
  const starts: number[] = [];
  const finishes: number[] = [];
  for (const c of pod.status?.containerStatuses ?? []) {
    for (const s of [c.state?.running?.startedAt, c.state?.terminated?.startedAt, c.lastState?.terminated?.startedAt]) {
      const t = time(s);
      if (t !== undefined) starts.push(t);
    }
    const f = time(c.state?.terminated?.finishedAt);
    if (f !== undefined) finishes.push(f);
  }
  const run: PodRun = { uid, session, gpus };
  if (pod.metadata.namespace) run.namespace = pod.metadata.namespace;
  if (pod.metadata.name) run.name = pod.metadata.name;
  if (starts.length > 0) run.startMs = Math.min(...starts);
  const ends: number[] = [];
  const deletion = time(pod.metadata.deletionTimestamp);
  if (deletion !== undefined) {
    const grace = Number((pod.metadata as { deletionGracePeriodSeconds?: number }).deletionGracePeriodSeconds ?? 0);
    ends.push(deletion - grace * 1000);
  }
  // A pod that finished on its own held its GPU until then, not until someone deleted it later.
  if ((pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed") && finishes.length > 0)
    ends.push(Math.max(...finishes));
  if (ends.length > 0) run.endMs = Math.min(...ends);
  return run;
}

export interface DueSamples {
  samples: UsageSample[];
  /** Start (ms) of the first interval not covered by `samples`; where to continue after they are acknowledged. */
  nextMs: number;
  /** Every interval of the run is in `samples` (or there is nothing to charge): forget the pod once sent. */
  complete: boolean;
}

/**
 * The samples of a run due at `nowMs`, from the interval starting at `fromMs` (undefined: the run's
 * first), at most `limit` of them. Closed intervals are due `graceMs` after their end; the interval
 * holding the run's end as soon as the end is known.
 */
export function dueSamples(
  run: PodRun,
  fromMs: number | undefined,
  nowMs: number,
  opts: { intervalMs: number; graceMs: number; limit: number },
): DueSamples {
  const I = opts.intervalMs;
  if (run.startMs === undefined) return { samples: [], nextMs: fromMs ?? 0, complete: run.endMs !== undefined };
  const start = run.startMs;
  let k = fromMs ?? Math.floor(start / I) * I;
  const samples: UsageSample[] = [];
  if (run.endMs !== undefined && run.endMs <= start) return { samples, nextMs: k, complete: true };
  while (samples.length < opts.limit) {
    const end = k + I;
    const ended = run.endMs !== undefined && run.endMs <= end;
    // Once the end is known every interval up to it is due; before, only those closed for `graceMs`.
    if (run.endMs === undefined && end > nowMs - opts.graceMs) break;
    const from = Math.max(k, start);
    const to = ended ? (run.endMs as number) : end;
    if (to > from)
      samples.push({
        id: `${run.uid}:${I / 1000}:${k / 1000}`,
        session: run.session,
        start: new Date(from).toISOString(),
        end: new Date(to).toISOString(),
        gpu_seconds: Math.round(run.gpus * (to - from)) / 1000,
      });
    k = end;
    if (ended) return { samples, nextMs: k, complete: true };
  }
  return { samples, nextMs: k, complete: false };
}

/** Thrown by a usage sender when the control plane refused samples for good (never on a transient failure). */
export class UsageRefused extends Error {
  /** Sessions whose samples the control plane will never take (not on this cluster): dropped, the rest retried. */
  readonly sessions: string[];
  constructor(message: string, sessions: string[]) {
    super(message);
    this.sessions = sessions;
  }
}

/** A pod's GPU figures averaged over a span, as far as the source saw them. */
export interface GpuUsage {
  /** Mean utilisation of the pod's GPUs, 0–100 %. */
  utilization?: number;
  /** Framebuffer memory used by the pod's GPUs together, MiB. */
  memoryMib?: number;
}

/** Where GPU utilisation and memory come from, when the cluster exposes them. */
export interface GpuUsageSource {
  /** The pod's averages over [fromMs, toMs); undefined when nothing was seen for it in that span. */
  usage(pod: { namespace: string; name: string }, fromMs: number, toMs: number): GpuUsage | undefined;
}

/** Adds what the source saw of the run's pod over the sample's span; rounded as the control plane stores it. */
export function withGpuUsage(sample: UsageSample, run: PodRun, source: GpuUsageSource | undefined): UsageSample {
  if (!source || !run.namespace || !run.name) return sample;
  const u = source.usage(
    { namespace: run.namespace, name: run.name },
    Date.parse(sample.start),
    Date.parse(sample.end),
  );
  if (!u) return sample;
  const out = { ...sample };
  if (u.utilization !== undefined && Number.isFinite(u.utilization))
    out.gpu_utilization = Math.round(Math.min(100, Math.max(0, u.utilization)) * 1000) / 1000;
  // The control plane stores a 32-bit integer and refuses the batch beyond; an exporter's nonsense reading
  // must not cost the sample (and with it the session's metering).
  if (u.memoryMib !== undefined && Number.isFinite(u.memoryMib))
    out.gpu_memory_mib = Math.min(2_147_483_647, Math.max(0, Math.round(u.memoryMib)));
  return out;
}

export interface UsageMeterOptions {
  /** Length of a usage interval; a whole number of seconds. */
  intervalMs: number;
  /** A closed interval is sent this long after its end (a deletion seen late still lands in its interval). */
  graceMs: number;
  /** Samples per batch. */
  batch: number;
}

interface Metered {
  run: PodRun;
  /** Start of the first interval not yet acknowledged; undefined: the run's first. */
  nextMs?: number;
  /** Every sample acknowledged; kept only while the pod is still listed, so it is not metered again. */
  done: boolean;
  /** The pod is gone from the cluster. */
  gone: boolean;
}

/**
 * Keeps the runs of the session pods it is shown and sends their samples: on a timer at every interval's
 * end, and at once when a run ends. One batch at a time; a failed batch is retried with backoff.
 */
export class UsageMeter {
  readonly #o: UsageMeterOptions;
  readonly #send: (samples: UsageSample[]) => Promise<void>;
  readonly #now: () => number;
  readonly #onError: (err: unknown, samples: number) => void;
  readonly #gpu: GpuUsageSource | undefined;
  readonly #runs = new Map<string, Metered>();
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;
  #failures = 0;
  #stopped = false;
  readonly counts = { samples: 0, batches: 0, failedBatches: 0, dropped: 0 };

  constructor(deps: {
    options: UsageMeterOptions;
    send: (samples: UsageSample[]) => Promise<void>;
    now: () => number;
    onError: (err: unknown, samples: number) => void;
    /** GPU utilisation and memory per pod; without it samples carry GPU seconds only. */
    gpu?: GpuUsageSource;
  }) {
    if (deps.options.intervalMs < 1000 || deps.options.intervalMs % 1000 !== 0)
      throw new Error("usage intervalMs must be a whole number of seconds");
    this.#o = deps.options;
    this.#send = deps.send;
    this.#now = deps.now;
    this.#onError = deps.onError;
    this.#gpu = deps.gpu;
  }

  /** A pod as the informer sees it now (`gone`: it was deleted; its last state is given). */
  observe(run: PodRun, gone = false): void {
    if (this.#stopped) return;
    const m = this.#runs.get(run.uid);
    if (!m) {
      if (gone && run.startMs === undefined) return;
      this.#runs.set(run.uid, { run, done: false, gone });
    } else {
      // The start only moves earlier (a container restart must not shorten the run); the end, once known, stays.
      const startMs = m.run.startMs === undefined ? run.startMs : Math.min(m.run.startMs, run.startMs ?? m.run.startMs);
      m.run = {
        ...run,
        ...(startMs !== undefined ? { startMs } : {}),
        ...(m.run.endMs !== undefined ? { endMs: m.run.endMs } : {}),
      };
      m.gone ||= gone;
      if (m.done && m.gone) this.#runs.delete(run.uid);
    }
    const cur = this.#runs.get(run.uid);
    if (cur && gone && cur.run.endMs === undefined) cur.run.endMs = this.#now();
    if (cur?.run.endMs !== undefined && !cur.done) this.#schedule(0);
    else this.#schedule();
  }

  /** Runs the meter knows and has not finished with (tests, metrics). */
  get tracked(): number {
    let n = 0;
    for (const m of this.#runs.values()) if (!m.done) n++;
    return n;
  }

  /** Resolves when every due sample was acknowledged (tests). */
  async idle(): Promise<void> {
    for (let i = 0; i < 2000; i++) {
      await this.#flushing;
      if (!this.#hasDue()) return;
      this.#schedule(0);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#flushing;
    // A last attempt for what is due (a pause just before losing the lease); the next leader resends anyway.
    if (this.#hasDue()) await this.#flush().catch(() => {});
  }

  #hasDue(): boolean {
    const now = this.#now();
    for (const m of this.#runs.values())
      if (!m.done && dueSamples(m.run, m.nextMs, now, { ...this.#o, limit: 1 }).samples.length > 0) return true;
    return false;
  }

  /** Next flush: after `delayMs`, or at the next interval's end plus grace. An earlier timer wins. */
  #schedule(delayMs?: number): void {
    if (this.#stopped) return;
    const now = this.#now();
    const I = this.#o.intervalMs;
    const atBoundary = Math.floor(now / I) * I + I + this.#o.graceMs - now;
    const delay = Math.max(0, delayMs ?? (atBoundary > I ? atBoundary - I : atBoundary));
    if (this.#timer && this.#timerAt <= now + delay) return;
    clearTimeout(this.#timer);
    this.#timerAt = now + delay;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#flushing ??= this.#flush().finally(() => {
        this.#flushing = undefined;
        const backoff = this.#failures > 0 ? Math.min(30_000, 250 * 2 ** Math.min(this.#failures, 7)) : undefined;
        if (backoff !== undefined) this.#schedule(backoff);
        else if (this.#hasDue()) this.#schedule(0);
        else this.#schedule();
      });
    }, delay);
    this.#timer.unref?.();
  }
  #timerAt = 0;

  async #flush(): Promise<void> {
    const now = this.#now();
    const batch: UsageSample[] = [];
    const advance: [Metered, DueSamples][] = [];
    for (const m of this.#runs.values()) {
      if (m.done) continue;
      const due = dueSamples(m.run, m.nextMs, now, { ...this.#o, limit: this.#o.batch - batch.length });
      if (due.samples.length === 0 && !due.complete) continue;
      for (const sample of due.samples) batch.push(withGpuUsage(sample, m.run, this.#gpu));
      advance.push([m, due]);
      if (batch.length >= this.#o.batch) break;
    }
    if (advance.length === 0) return;
    try {
      if (batch.length > 0) await this.#send(batch);
      this.#failures = 0;
      this.counts.batches += batch.length > 0 ? 1 : 0;
      this.counts.samples += batch.length;
    } catch (err) {
      if (err instanceof UsageRefused && err.sessions.length > 0) {
        for (const m of this.#runs.values())
          if (err.sessions.includes(m.run.session)) {
            this.counts.dropped++;
            this.#finish(m);
          }
      } else this.#failures++;
      this.counts.failedBatches++;
      this.#onError(err, batch.length);
      return;
    }
    for (const [m, due] of advance) {
      m.nextMs = due.nextMs;
      if (due.complete) this.#finish(m);
    }
  }

  #finish(m: Metered): void {
    m.done = true;
    if (m.gone) this.#runs.delete(m.run.uid);
  }
}
