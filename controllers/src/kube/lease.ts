// Leader election on a coordination.k8s.io Lease, so that of several replicas (the operator's, the
// worker's) exactly one does the leader-only work. The loop runs every retryPeriod: read the lease, decide (lease-decide.ts), write with the
// resourceVersion read (a concurrent writer gets 409 and loses). The leader steps down by itself when it
// could not renew for renewDeadline, which is shorter than the lease duration a follower waits: so the
// old leader has stopped before anyone can take over.
//
// The lease's namespace must exist: creating namespaces is not a right the operator has (see the
// operator's rbac.ts); the control plane creates it at registration.
import type { Logger } from "pino";
import { errInfo, type KubeApi } from "./client.ts";
import { decide, type LeaseSpec, nextSpec, type Observation, observe, releasedSpec } from "./lease-decide.ts";
import { sleep } from "./sleep.ts";

export interface ElectorOptions {
  kube: KubeApi;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** Wall-clock milliseconds; default Date.now. Tests own it. */
  clock?: { now(): number };
  log: Logger;
  /** Called when this replica becomes leader. */
  onStartedLeading: () => void;
  /**
   * Called when it stops being leader (lost the lease, could not renew, or stopped). It must stop
   * leader-only work at once (synchronously); the promise it returns is awaited before a release.
   */
  onStoppedLeading: () => void | Promise<void>;
  random?: () => number;
}

/**
 * The timings the elector relies on, the fields that break them: a leader gives up (renew deadline)
 * before a follower may take over (duration), and tries more than once within its deadline (retry
 * period). Each configuration reports them in its own names.
 */
export function leaseTimingProblems(t: {
  durationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}): ("renewDeadlineMs" | "retryPeriodMs")[] {
  return [
    ...(t.renewDeadlineMs >= t.durationMs ? (["renewDeadlineMs"] as const) : []),
    ...(t.retryPeriodMs >= t.renewDeadlineMs ? (["retryPeriodMs"] as const) : []),
  ];
}

interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec?: LeaseSpec;
}

export class LeaderElector {
  readonly #o: ElectorOptions & { clock: { now(): number } };
  readonly #path: string;
  readonly #abort = new AbortController();
  #observed: Observation | undefined;
  /** Local time of the last successful acquire or renew, while leader. */
  #renewedAt: number | undefined;
  #leading = false;
  #loop: Promise<void> | undefined;
  /** Led at least once: the lease may name this replica. */
  #everLed = false;
  #lastWaitLog = "";
  /** The last problem logged; the same problem again is logged at debug, not every retry period. */
  #lastProblem = "";

  constructor(opts: ElectorOptions) {
    this.#o = { ...opts, clock: opts.clock ?? { now: () => Date.now() } };
    this.#path = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(opts.namespace)}/leases`;
  }

  /** True only while the last renewal is younger than the renew deadline. */
  isLeader(): boolean {
    return (
      this.#leading && this.#renewedAt !== undefined && this.#o.clock.now() - this.#renewedAt < this.#o.renewDeadlineMs
    );
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  /**
   * Stops campaigning. With `release` (the default, a graceful shutdown) a leader clears the holder so a
   * follower takes over at its next attempt instead of after the lease duration.
   */
  async stop(opts: { release?: boolean } = {}): Promise<void> {
    this.#abort.abort();
    await this.#loop;
    await this.#stepDown("stopped");
    // Released whenever the lease may still name this replica, even after a late renewal made it step down:
    // a renewal aborted by the stop may still have been applied, so the lease is read afresh.
    if (opts.release !== false && this.#everLed) await this.#release();
  }

  async #release(): Promise<void> {
    const url = `${this.#path}/${encodeURIComponent(this.#o.name)}`;
    const timeoutMs = this.#o.renewDeadlineMs;
    try {
      for (let attempt = 0; attempt < 3; attempt++) {
        const got = await this.#o.kube.request<Lease>("GET", url, { timeoutMs });
        if (got.status === 404) return;
        if (got.status !== 200) throw new Error(`reading the lease: the apiserver answered ${got.status}`);
        if (got.body.spec?.holderIdentity !== this.#o.identity) return;
        const res = await this.#o.kube.request("PUT", url, {
          body: { ...got.body, spec: releasedSpec(got.body.spec ?? {}, this.#o.clock.now()) },
          timeoutMs,
        });
        if (res.status === 200) {
          this.#o.log.info(this.#key(), "lease released");
          return;
        }
        if (res.status !== 409) throw new Error(`the apiserver answered ${res.status}`);
      }
      throw new Error("the lease kept changing under the release");
    } catch (e) {
      this.#o.log.warn(
        { ...this.#key(), error: errInfo(e) },
        "could not release the lease; a follower takes over when it expires",
      );
    }
  }

  #key() {
    return { kind: "Lease", namespace: this.#o.namespace, name: this.#o.name, identity: this.#o.identity };
  }

  async #stepDown(why: string): Promise<void> {
    if (!this.#leading) return;
    this.#leading = false;
    this.#renewedAt = undefined;
    this.#o.log.warn({ ...this.#key(), why }, "stopped leading");
    await this.#o.onStoppedLeading();
  }

  async #run(): Promise<void> {
    const signal = this.#abort.signal;
    const random = this.#o.random ?? Math.random;
    while (!signal.aborted) {
      const started = this.#o.clock.now();
      try {
        await this.#attempt(signal);
      } catch (e) {
        if (signal.aborted) break;
        this.#problem("lease call failed", { error: errInfo(e) });
      }
      if (this.#leading && !this.isLeader()) void this.#stepDown("could not renew within the renew deadline");
      // Followers add jitter (client-go: JitterFactor 1.2) so that they do not collide on takeover.
      const period = this.#leading ? this.#o.retryPeriodMs : this.#o.retryPeriodMs * (1 + 0.2 * random());
      await sleep(Math.max(0, period - (this.#o.clock.now() - started)), signal);
    }
  }

  async #attempt(signal: AbortSignal): Promise<void> {
    const client = this.#o.kube;
    const now = () => this.#o.clock.now();
    // Renewals must finish within the deadline or they are worthless.
    const timeoutMs = Math.max(
      1,
      this.#o.renewDeadlineMs - (this.#renewedAt === undefined ? 0 : now() - this.#renewedAt),
    );
    const url = `${this.#path}/${encodeURIComponent(this.#o.name)}`;
    const got = await client.request<Lease>("GET", url, { signal, timeoutMs });
    if (got.status === 404) {
      const lease: Lease = {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name: this.#o.name, namespace: this.#o.namespace },
        spec: nextSpec(undefined, this.#o.identity, now(), this.#o.leaseDurationMs),
      };
      const created = await client.request<Lease>("POST", this.#path, { body: lease, signal, timeoutMs });
      if (created.status === 201) return this.#won(created.body);
      if (created.status === 409) return; // another replica created it first
      this.#problem(
        created.status === 404 ? "the lease namespace does not exist (a prerequisite)" : "could not create the lease",
        {
          status: created.status,
          message: (created.body as { message?: string })?.message,
        },
      );
      return;
    }
    if (got.status !== 200) {
      this.#problem("could not read the lease", {
        status: got.status,
        message: (got.body as { message?: string })?.message,
      });
      return;
    }
    this.#lastProblem = "";
    const lease = got.body;
    const spec = lease.spec ?? {};
    this.#observed = observe(this.#observed, spec, now());
    const d = decide(spec, this.#observed, this.#o.identity, now(), this.#o.leaseDurationMs);
    if (d.action === "wait") {
      if (this.#leading) void this.#stepDown(`the lease is held by ${d.holder}`);
      if (this.#lastWaitLog !== d.holder) {
        this.#lastWaitLog = d.holder;
        this.#o.log.info({ ...this.#key(), holder: d.holder }, "following");
      }
      return;
    }
    const updated = await client.request<Lease>("PUT", url, {
      body: { ...lease, spec: nextSpec(spec, this.#o.identity, now(), this.#o.leaseDurationMs) },
      signal,
      timeoutMs,
    });
    if (updated.status === 200) {
      if (d.action === "acquire" && d.takeover)
        this.#o.log.info({ ...this.#key(), from: spec.holderIdentity }, "took over an expired lease");
      return this.#won(updated.body);
    }
    if (updated.status === 409) return; // someone else wrote first; the next read tells who
    this.#problem("could not write the lease", {
      status: updated.status,
      message: (updated.body as { message?: string })?.message,
    });
  }

  #problem(msg: string, fields: Record<string, unknown>): void {
    const signature = JSON.stringify([msg, fields]);
    const level = signature === this.#lastProblem ? "debug" : "warn";
    this.#lastProblem = signature;
    this.#o.log[level]({ ...this.#key(), ...fields }, msg);
  }

  #won(lease: Lease): void {
    this.#everLed = true;
    this.#observed = observe(this.#observed, lease.spec ?? {}, this.#o.clock.now());
    this.#renewedAt = this.#o.clock.now();
    this.#lastWaitLog = "";
    this.#lastProblem = "";
    if (!this.#leading) {
      this.#leading = true;
      this.#o.log.info(this.#key(), "started leading");
      this.#o.onStartedLeading();
    }
  }
}
