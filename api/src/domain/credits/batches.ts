// A biller's passes: each batch in a transaction of its own, tried again on a deadlock or a serialization
// failure, until a batch comes back short of `chargeBatch` (nothing left that another biller does not hold).
import type { Knex } from "knex";
import { DEADLOCK_DETECTED, SERIALIZATION_FAILURE, sqlState } from "../../db/sqlstate.ts";
import type { CreditsContext } from "./context.ts";

/** What batches charged: `items` counts what each batch took (samples, volumes). */
export interface BatchTally {
  items: number;
  charged: bigint;
  shortfall: bigint;
  /** Wallets that paid something (the running-out watch and the mirror look at them). */
  wallets: Set<string>;
}

export async function billInBatches(
  b: CreditsContext,
  maxBatches: number | undefined,
  batch: (tx: Knex.Transaction) => Promise<BatchTally>,
): Promise<BatchTally> {
  const total: BatchTally = { items: 0, charged: 0n, shortfall: 0n, wallets: new Set() };
  for (let i = 0; i < (maxBatches ?? Number.POSITIVE_INFINITY); i++) {
    const r = await retrying(() => b.db.transaction(batch));
    total.items += r.items;
    total.charged += r.charged;
    total.shortfall += r.shortfall;
    for (const w of r.wallets) total.wallets.add(w);
    if (r.items < b.options.chargeBatch) break;
  }
  return total;
}

async function retrying<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      const s = sqlState(err);
      if (attempt < 5 && (s === DEADLOCK_DETECTED || s === SERIALIZATION_FAILURE)) continue;
      throw err;
    }
  }
}
