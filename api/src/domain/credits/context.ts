// What billing needs, injected (house style: options objects and injected time). Made once per Deps by
// buildDeps (deps.credits); the worker, tests and the bench build their own with `new CreditsContext({...})`.
import type { Offering } from "@berth/crds";
import type { Knex } from "knex";
import type { Logger } from "pino";

/** An offering as billing reads it: its hourly rate (minor units, for its own GPU count) and GPU count. */
export interface OfferingRate {
  hourlyCreditRate: string;
  gpuCount: number;
  /** Borrowed capacity's share of the rate in thousandths (docs/dev/fair-share.md); absent: 1000. */
  borrowedRatePermille?: number;
}

/** Live offering by name; undefined when it no longer exists; throws when the catalog cannot answer. */
export type OfferingRates = (name: string) => Promise<OfferingRate | undefined>;

export interface CreditsOptions {
  /** A session may start or resume only if its wallets cover this many seconds at its rate. Default 600. */
  minimumRunSeconds: number;
  /** Warn the owner when the wallets will not cover this many seconds of their running sessions. Default 600. */
  warnAheadSeconds: number;
  /** Pause sessions the wallets cannot cover for this many seconds. Default 60 ("the next minute"). */
  pauseAheadSeconds: number;
  /** Samples per charging transaction. Default 1,000. */
  chargeBatch: number;
  /** Storage is charged in spans ending on this epoch-aligned grid (domain/credits/storage.ts). Default 1 h. */
  storageIntervalMs: number;
}

export const DEFAULT_CREDITS_OPTIONS: CreditsOptions = {
  minimumRunSeconds: 600,
  warnAheadSeconds: 600,
  pauseAheadSeconds: 60,
  chargeBatch: 1_000,
  storageIntervalMs: 3_600_000,
};

export class CreditsContext {
  readonly db: Knex;
  readonly clock: { now(): Date };
  readonly log: Logger;
  readonly offerings: OfferingRates;
  readonly options: CreditsOptions;
  /** The after-ingestion pass of this context (kick.ts): one running, at most one asked for after it. */
  readonly pass: { running: Promise<void> | undefined; again: boolean } = { running: undefined, again: false };
  constructor(o: {
    db: Knex;
    clock: { now(): Date };
    log: Logger;
    offerings?: OfferingRates;
    options?: Partial<CreditsOptions>;
  }) {
    this.db = o.db;
    this.clock = o.clock;
    this.log = o.log.child({ component: "billing" });
    this.offerings = o.offerings ?? (async () => undefined);
    this.options = { ...DEFAULT_CREDITS_OPTIONS, ...o.options };
  }
}

/** The live catalog's offerings, when this process has a management cluster (else: none, see charge.ts). */
export function catalogOfferings(
  catalog: { offering(name: string): Promise<Offering | undefined> } | undefined,
): OfferingRates {
  return async (name) => {
    // No management cluster configured: the session's recorded rate applies.
    if (!catalog) return undefined;
    const o = await catalog.offering(name);
    return o
      ? {
          hourlyCreditRate: o.spec.hourlyCreditRate,
          gpuCount: o.spec.gpuCount,
          ...(o.spec.borrowedRatePermille !== undefined ? { borrowedRatePermille: o.spec.borrowedRatePermille } : {}),
        }
      : undefined;
  };
}
