// What startOperator takes besides its configuration, and what it hands back (operator.ts).
import type { RunningMirrorController } from "@berth/controllers";
import type { Logger } from "pino";
import type { Clock } from "./clock.ts";
import type { InventoryReporter } from "./inventory/reporter.ts";
import type { OperatorMetrics } from "./metrics.ts";

export interface StartOperatorOptions {
  log: Logger;
  clock?: Clock;
  /** Source of jitter; tests may fix it. */
  random?: () => number;
}

export interface RunningOperator {
  readonly identity: string;
  /** Base URL of the status server. */
  readonly url: string;
  /** `${url}/healthz`: 200 while a follower, or while leader with both watches synced. */
  readonly healthUrl: string;
  readonly metricsUrl: string;
  readonly metrics: OperatorMetrics;
  isLeader(): boolean;
  /** The inventory reporter while leading (tests). */
  inventory(): InventoryReporter | undefined;
  /** The session mirrors' controller while leading (tests read what it found and wrote). */
  sessionMirrors(): RunningMirrorController | undefined;
  /**
   * Stops everything. By default a leader releases its lease so a follower takes over at once;
   * `{ release: false }` leaves it to expire, as a crash would.
   */
  stop(opts?: { release?: boolean }): Promise<void>;
}
