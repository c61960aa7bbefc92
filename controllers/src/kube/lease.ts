// Leader election on a coordination.k8s.io Lease, as client-go's leaderelection does it: take the lease
// when it is free or expired, renew it well before it expires, and stop leading (before anyone else can
// start) when renewing fails for longer than the renew deadline. Every write carries the resourceVersion
// read, so two candidates can never both win the same round.
import type { KubeApi } from "./client.ts";

export interface LeaseOptions {
  kube: KubeApi;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  onStartedLeading(): void;
  /** Awaited before the elector tries again. */
  onStoppedLeading(): Promise<void> | void;
  onError?(err: unknown, what: string): void;
}

interface Lease {
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

const micro = (d: Date) => d.toISOString().replace("Z", "000Z");

export class LeaseElector {
  readonly #o: Required<Omit<LeaseOptions, "onError">> & Pick<LeaseOptions, "onError">;
  #leading = false;
  #stopped = false;
  #loop: Promise<void> | undefined;
  #wake: (() => void) | undefined;

  constructor(o: LeaseOptions) {
    this.#o = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, ...o };
  }

  isLeader(): boolean {
    return this.#leading;
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  /** Stops; a leader gives the lease up so a follower takes over at once. */
  async stop(opts: { release?: boolean } = {}): Promise<void> {
    this.#stopped = true;
    this.#wake?.();
    await this.#loop;
    if (this.#leading) {
      this.#leading = false;
      await this.#o.onStoppedLeading();
      if (opts.release !== false) await this.#release();
    }
  }

  get #path(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${this.#o.namespace}/leases`;
  }

  async #sleep(ms: number): Promise<void> {
    await new Promise<void>((r) => {
      const t = setTimeout(r, ms);
      this.#wake = () => {
        clearTimeout(t);
        r();
      };
    });
    this.#wake = undefined;
  }

  /** One attempt to take or keep the lease; true when we hold it afterwards. */
  async #tryAcquireOrRenew(): Promise<boolean> {
    const { kube, name, namespace, identity, leaseDurationMs } = this.#o;
    const now = new Date();
    const res = await kube.request<Lease>("GET", `${this.#path}/${name}`, { timeoutMs: this.#o.renewDeadlineMs });
    const spec = {
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(leaseDurationMs / 1000),
      renewTime: micro(now),
    };
    if (res.status === 404) {
      const created = await kube.request("POST", this.#path, {
        body: {
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          metadata: { name, namespace },
          spec: { ...spec, acquireTime: micro(now), leaseTransitions: 0 },
        },
        timeoutMs: this.#o.renewDeadlineMs,
      });
      return created.status === 201;
    }
    if (res.status !== 200) throw new Error(`reading lease ${namespace}/${name}: ${res.status}`);
    const lease = res.body;
    const holder = lease.spec.holderIdentity;
    const renewed = Date.parse(lease.spec.renewTime ?? lease.spec.acquireTime ?? "") || 0;
    const expired = renewed + (lease.spec.leaseDurationSeconds ?? 15) * 1000 < now.getTime();
    if (holder && holder !== identity && !expired) return false;
    const mine = holder === identity;
    const body = {
      ...lease,
      spec: {
        ...lease.spec,
        ...spec,
        acquireTime: mine ? lease.spec.acquireTime : micro(now),
        leaseTransitions: (lease.spec.leaseTransitions ?? 0) + (mine ? 0 : 1),
      },
    };
    const put = await kube.request("PUT", `${this.#path}/${name}`, { body, timeoutMs: this.#o.renewDeadlineMs });
    return put.status === 200;
  }

  async #release(): Promise<void> {
    try {
      const res = await this.#o.kube.request<Lease>("GET", `${this.#path}/${this.#o.name}`);
      if (res.status !== 200 || res.body.spec.holderIdentity !== this.#o.identity) return;
      const lease = res.body;
      // As client-go: an empty holder and a lease that reads as expired.
      await this.#o.kube.request("PUT", `${this.#path}/${this.#o.name}`, {
        body: {
          ...lease,
          spec: { ...lease.spec, holderIdentity: "", leaseDurationSeconds: 1, renewTime: micro(new Date(0)) },
        },
      });
    } catch (e) {
      this.#o.onError?.(e, "releasing the lease");
    }
  }

  async #run(): Promise<void> {
    let lastRenew = 0;
    while (!this.#stopped) {
      let held = false;
      try {
        held = await this.#tryAcquireOrRenew();
      } catch (e) {
        this.#o.onError?.(e, "lease attempt failed");
      }
      if (this.#stopped) break;
      if (held) {
        lastRenew = Date.now();
        if (!this.#leading) {
          this.#leading = true;
          this.#o.onStartedLeading();
        }
      } else if (this.#leading && Date.now() - lastRenew > this.#o.renewDeadlineMs) {
        this.#leading = false;
        await this.#o.onStoppedLeading();
      }
      await this.#sleep(this.#leading ? this.#o.retryPeriodMs : this.#o.retryPeriodMs * (0.8 + Math.random() * 0.4));
    }
  }
}
