// Sign-in throttling, kept in Postgres (table login_failures) so every API replica counts the same
// failures and a restart does not forgive them.
//
// Sliding window of 15 minutes; an attempt is refused with 429 when, within the window, there were
//   - 5 failures for the same account from the same source address (the usual case: someone guessing),
//   - 50 failures from one source address, whatever the accounts (spraying one password over many),
//   - 50 failures for one account, whatever the sources (a distributed guess at one account).
// The third limit lets a botnet lock one account out for a window; that is the accepted price for
// bounding a distributed guess, and 50 is far above what a person mistyping reaches.
// The email is counted as typed (lowercased) whether or not the account exists, so the throttle itself
// does not reveal which accounts exist. A success clears that account's failures from that source.
//
// An attempt is recorded as a failure *before* its password is checked, and its row deleted if it
// succeeds. Per account and source every recorded attempt counts, in flight or not, so a burst of
// parallel guesses at one account cannot outrun the count (the price: more than 5 simultaneous sign-ins
// of one account from one address are refused too). The per-source and per-account limits count only
// attempts older than IN_FLIGHT_SECONDS, i.e. settled failures: many people signing in at once behind
// one NAT address are not refused because of each other's pending sign-ins. A spray can thus slip one
// burst past those two limits, bounded by what argon2id lets the server verify in IN_FLIGHT_SECONDS.
import type { Knex } from "knex";
import type { Clock } from "../../clock.ts";

export interface ThrottleLimits {
  windowSeconds: number;
  perAccountAndSource: number;
  perSource: number;
  perAccount: number;
}

export const DEFAULT_THROTTLE: ThrottleLimits = {
  windowSeconds: 15 * 60,
  perAccountAndSource: 5,
  perSource: 50,
  perAccount: 50,
};

/** A sign-in settles well within this (argon2id ~40 ms); younger rows may still be successes in flight. */
export const IN_FLIGHT_SECONDS = 10;

export interface AttemptRefused {
  refused: true;
  retryAfterSeconds: number;
  limit: "account_and_source" | "source" | "account";
}

export interface Attempt {
  refused: false;
  /** The password was right: forget this account's failures from this source. */
  succeeded(): Promise<void>;
  /** The password was wrong: the attempt stays counted (nothing to do; kept for readability). */
  failed(): Promise<void>;
}

export class LoginThrottle {
  readonly limits: ThrottleLimits;
  readonly #db: Knex;
  readonly #clock: Clock;

  constructor(opts: { db: Knex; clock: Clock; limits?: ThrottleLimits }) {
    this.#db = opts.db;
    this.#clock = opts.clock;
    this.limits = opts.limits ?? DEFAULT_THROTTLE;
  }

  /**
   * Records the attempt as a failure first and then counts the failures before it; a burst of parallel
   * guesses therefore cannot all slip in under the limit while none has been recorded yet. A refused
   * attempt is not counted (its row is removed), so waiting out the window always works.
   */
  async begin(email: string, source: string): Promise<Attempt | AttemptRefused> {
    const db = this.#db;
    const now = this.#clock.now();
    const since = new Date(now.getTime() - this.limits.windowSeconds * 1000);
    const settled = new Date(now.getTime() - IN_FLIGHT_SECONDS * 1000);
    const [mine] = await db("login_failures").insert({ email, source, at: now }).returning("id");
    const id = (mine as { id: string }).id;

    const [c] = (await db("login_failures")
      .where("at", ">", since)
      .andWhere("id", "<", id)
      .andWhere((w) => w.where({ email }).orWhere({ source }))
      .select(
        db.raw("count(*) filter (where email = ? and source = ?)::int as pair", [email, source]),
        db.raw("count(*) filter (where source = ? and at <= ?)::int as src", [source, settled]),
        db.raw("count(*) filter (where email = ? and at <= ?)::int as acct", [email, settled]),
      )) as [{ pair: number; src: number; acct: number }]; // an aggregate without GROUP BY: one row

    const over =
      c.pair >= this.limits.perAccountAndSource
        ? { limit: "account_and_source" as const, where: { email, source }, n: this.limits.perAccountAndSource }
        : c.src >= this.limits.perSource
          ? { limit: "source" as const, where: { source }, n: this.limits.perSource }
          : c.acct >= this.limits.perAccount
            ? { limit: "account" as const, where: { email }, n: this.limits.perAccount }
            : undefined;

    if (over) {
      await db("login_failures").where({ id }).del();
      // The count falls below the limit when the n-th most recent failure leaves the window.
      const row = (await db("login_failures")
        .where(over.where)
        .andWhere("at", ">", since)
        .andWhere("at", "<=", over.limit === "account_and_source" ? now : settled)
        .orderBy("at", "desc")
        .offset(over.n - 1)
        .first("at")) as { at: Date } | undefined;
      const until = row ? row.at.getTime() + this.limits.windowSeconds * 1000 : now.getTime() + 1000;
      return {
        refused: true,
        limit: over.limit,
        retryAfterSeconds: Math.max(1, Math.ceil((until - now.getTime()) / 1000)),
      };
    }

    return {
      refused: false,
      succeeded: async () => {
        // Housekeeping rides on successes, in the same statement: rows older than the window count for nothing.
        await db("login_failures")
          .where((w) => w.where({ email, source }).orWhere("at", "<", since))
          .del();
      },
      failed: async () => {},
    };
  }
}
