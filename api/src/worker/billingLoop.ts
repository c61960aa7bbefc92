// Billing's leader-only loop in the worker (controllers/src/worker.ts runs it while leading). Each pass:
//   1. charge usage samples nobody has charged yet (what an API process left when it died, or failed),
//      then storage due up to the last grid boundary (domain/credits/storage.ts);
//   2. apply due refills, each period once;
//   3. the running-out watch: warn, then pause sessions their credits cannot cover;
//   4. mirror changed wallets to their Wallet resources.
// A failing step is logged and retried on the next pass (retryable by nature: every step is idempotent);
// the pass interval is the retry delay.
import { PeriodicPass } from "@berth/controllers/kube";
import type { Logger } from "pino";
import { billPendingUsage } from "../domain/credits/charge.ts";
import type { CreditsContext } from "../domain/credits/context.ts";
import type { WalletMirror } from "../domain/credits/mirror.ts";
import { applyDueRefills } from "../domain/credits/refills.ts";
import { type PauseSession, watchRunningOut } from "../domain/credits/runningOut.ts";
import { billStorage } from "../domain/credits/storage.ts";

export interface BillingLoopOptions {
  billing: CreditsContext;
  pause: PauseSession;
  mirror?: WalletMirror;
  /** Default 5 s. */
  intervalMs?: number;
}

export class BillingLoop {
  readonly #o: BillingLoopOptions;
  readonly #log: Logger;
  readonly #loop: PeriodicPass;
  #halting = false;
  passes = 0;

  constructor(o: BillingLoopOptions) {
    this.#o = o;
    this.#log = o.billing.log.child({ component: "billing-loop" });
    // pass() logs each failed step itself and never throws.
    this.#loop = new PeriodicPass({
      intervalMs: o.intervalMs ?? 5_000,
      pass: () => this.pass(),
      onError: (err) => this.#log.warn({ err }, "a billing pass failed; retried on the next pass"),
    });
  }

  start(): void {
    if (this.#loop.running) return;
    this.#halting = false;
    this.#loop.start();
  }

  async stop(): Promise<void> {
    this.#halting = true;
    await this.#loop.stop();
  }

  /** One pass of every step (tests call it directly). */
  async pass(): Promise<void> {
    const b = this.#o.billing;
    const steps: [string, () => Promise<unknown>][] = [
      ["charge", () => billPendingUsage(b)],
      ["storage", () => billStorage(b)],
      ["refills", () => applyDueRefills(b)],
      ["running-out", () => watchRunningOut(b, this.#o.pause)],
      ["mirror", () => this.#o.mirror?.sync() ?? Promise.resolve(0)],
    ];
    for (const [name, step] of steps) {
      if (this.#halting) break; // stopping (lost the lease): the next leader picks up from here
      try {
        await step();
      } catch (err) {
        this.#log.warn({ err, step: name }, "a billing step failed; retried on the next pass");
      }
    }
    this.passes++;
  }
}
