// Postgres statements this process sends, by shape, and how long their callers waited: pg's Client counted
// from within (one entry is one round trip, BEGIN and COMMIT included).
import pg from "pg";

export interface StatementCounts {
  /** A copy of the statements sent so far, by shape. */
  snapshot(): Map<string, number>;
  /** A copy of the milliseconds callers waited so far, by shape. */
  waitedSnapshot(): Map<string, number>;
}

/**
 * Counts from now on the Postgres statements sent by this process (in the sessions bench: API, worker, the
 * operator's reports through the internal route), by the statement's shape. Counted at pg's Client, under
 * knex: one entry is one round trip (BEGIN and COMMIT included). Patches pg's Client once: call it once.
 */
export function countStatements(): StatementCounts {
  const statements = new Map<string, number>();
  /** Milliseconds callers waited for statements, by shape (the lock statements' is time queued on the lock). */
  const waited = new Map<string, number>();
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const q = args[0];
    const text = typeof q === "string" ? q : ((q as { text?: string } | undefined)?.text ?? "");
    const shape = text.replace(/\s+/g, " ").replace(/\$\d+/g, "?").replace(/"/g, "").trim().slice(0, 48).toLowerCase();
    statements.set(shape, (statements.get(shape) ?? 0) + 1);
    // Time to the answer, as its caller waits for it (queueing on the connection and on locks included).
    const t0 = performance.now();
    const took = () => waited.set(shape, (waited.get(shape) ?? 0) + performance.now() - t0);
    const last = args.length - 1;
    const cb = args[last];
    if (typeof cb === "function")
      args[last] = (...r: unknown[]) => {
        took();
        return cb(...r);
      };
    const out = query.apply(this, args);
    if (out && typeof (out as Promise<unknown>).then === "function") (out as Promise<unknown>).then(took, took);
    return out;
  };
  return { snapshot: () => new Map(statements), waitedSnapshot: () => new Map(waited) };
}

/** The statements callers waited on longest in all, with their mean wait. */
export const slowest = (ms: Map<string, number>, count: Map<string, number>, n = 6) =>
  [...ms.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(
      ([k, v]) =>
        `"${k}" ${(v / 1000).toFixed(1)} s in all, ${(v / Math.max(1, count.get(k) ?? 0)).toFixed(1)} ms each`,
    )
    .join("; ");
export const top = (m: Map<string, number>, per: number, n = 8) =>
  [...m.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `${(v / per).toFixed(2)}× "${k}"`)
    .join("; ");
