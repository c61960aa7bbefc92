// The mirror controller's reports to the control plane (mirror/controller.ts): POST
// /internal/v1/sessions/status with {session: <ses_ id>, phase, node, reason, message,
// observed_generation: <the mirror's spec.revision>, at}. A change is sent within `debounceMs`; every
// mirror's state is sent again on each resync (an empty batch when there is none), which is also the
// heartbeat by which the control plane knows the cluster is alive. A failed batch is retried with
// backoff; a newer state of a session replaces an older one still waiting to be sent.
import type { SessionMirror } from "@berth/crds";
import type { Logger } from "pino";
import type { MirrorCounts, WireStatusReport } from "./options.ts";
import type { MirrorReport } from "./plan.ts";

export interface ReportBatcherDeps {
  /** Sends one batch; throws when the control plane did not take it (the batch is retried). */
  send(reports: WireStatusReport[]): Promise<void>;
  counts: MirrorCounts;
  log: Logger;
  now(): Date;
  debounceMs: number;
  batch: number;
}

export class ReportBatcher {
  readonly #d: ReportBatcherDeps;
  /** What was last reported per mirror key, and what the control plane still has to get. */
  readonly #reported = new Map<string, WireStatusReport>();
  readonly #pending = new Map<string, WireStatusReport>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #flushing: Promise<void> | undefined;
  #failures = 0;
  #stopped = false;

  constructor(d: ReportBatcherDeps) {
    this.#d = d;
  }

  /** Nothing waits to be sent, and no send is under way or scheduled. */
  get settled(): boolean {
    return this.#pending.size === 0 && !this.#timer;
  }

  /** Resolves when the send under way, if any, has ended. */
  async flushed(): Promise<void> {
    await this.#flushing;
  }

  /** The mirror's state as its plan reports it; sent when it differs from what was last reported. */
  report(key: string, m: SessionMirror, r: MirrorReport): void {
    const wire: WireStatusReport = {
      session: m.spec.sessionId,
      phase: r.phase,
      ...(r.node ? { node: r.node } : {}),
      // The cards the running pod holds: it is pinned to them (docs/dev/gpu-sharing.md).
      ...(r.phase === "Running" && m.spec.resources.gpuAssignment
        ? { gpu_devices: m.spec.resources.gpuAssignment.cards }
        : {}),
      reason: r.reason,
      message: r.message,
      observed_generation: m.spec.revision,
      at: this.#d.now().toISOString(),
    };
    const last = this.#reported.get(key);
    this.#reported.set(key, wire);
    if (
      last &&
      last.phase === wire.phase &&
      last.reason === wire.reason &&
      last.node === wire.node &&
      last.observed_generation === wire.observed_generation &&
      last.message === wire.message
    )
      return;
    this.#pending.set(key, wire);
    this.#schedule();
  }

  /**
   * The mirror is gone: say so once (pause and terminate wait for this), with the last revision seen.
   * True when it was said now.
   */
  gone(key: string): boolean {
    const last = this.#reported.get(key);
    if (!last || last.phase === "Terminated") return false;
    this.#reported.delete(key);
    this.#pending.set(key, {
      ...last,
      phase: "Terminated",
      reason: "MirrorDeleted",
      message: "the mirror and its pod are gone",
      node: null,
      at: this.#d.now().toISOString(),
    });
    this.#schedule();
    return true;
  }

  /** Every state sent again (the resync), or an empty batch when there is none: the heartbeat. */
  resendAll(): void {
    const at = this.#d.now().toISOString();
    for (const [k, r] of this.#reported) if (!this.#pending.has(k)) this.#pending.set(k, { ...r, at });
    if (this.#pending.size === 0) void this.#flush(true);
    else this.#schedule(0);
  }

  /** The first heartbeat, when nothing was sent yet. */
  heartbeat(): void {
    if (this.#pending.size === 0 && !this.#stopped) void this.#flush(true);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#flushing;
    // A last attempt for what changed just before the stop (a follower resends it on its first resync anyway).
    if (this.#pending.size > 0) await this.#flush().catch(() => {});
  }

  #schedule(delay = this.#d.debounceMs): void {
    if (this.#stopped || this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#flushing = this.#flush().finally(() => {
        this.#flushing = undefined;
        if (this.#pending.size > 0)
          this.#schedule(this.#failures > 0 ? Math.min(30_000, 250 * 2 ** Math.min(this.#failures, 7)) : 0);
      });
    }, delay);
  }

  async #flush(heartbeat = false): Promise<void> {
    if (this.#pending.size === 0 && !heartbeat) return;
    const batch = [...this.#pending.entries()].slice(0, this.#d.batch);
    for (const [k] of batch) this.#pending.delete(k);
    const counts = this.#d.counts;
    try {
      await this.#d.send(batch.map(([, r]) => r));
      this.#failures = 0;
      counts.batches++;
      counts.reports += batch.length;
    } catch (err) {
      this.#failures++;
      counts.failedBatches++;
      this.#d.log.warn(
        { err: String(err), reports: batch.length, attempt: this.#failures },
        "reporting session status failed; retrying",
      );
      // Put back what no newer state replaced meanwhile.
      for (const [k, r] of batch) if (!this.#pending.has(k)) this.#pending.set(k, r);
    }
  }
}
