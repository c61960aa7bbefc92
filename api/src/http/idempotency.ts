// Idempotency-Key for creating writes, stored in Postgres so it holds across API replicas.
//
// Insert first: the (scope, key) primary key is the lock. The request that inserts the row runs the
// handler; every other request with that key reads the row and gets the stored answer (done), 409 (still
// in flight) or 422 (same key, different request). Rows live `retentionSeconds` (24 h by default); an
// expired row counts as absent and is purged periodically. A row left in flight by a crashed replica can
// be taken over once it is older than `inFlightTimeoutSeconds`, by compare-and-set on locked_at.
import { createHash } from "node:crypto";
import type { Knex } from "knex";
import { z } from "zod";
import { Conflict, DomainError } from "../errors.ts";

export const IDEMPOTENCY_HEADER = "Idempotency-Key";
export const REPLAYED_HEADER = "Idempotent-Replayed";
export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9._:~+/=-]{1,255}$/;

export const IdempotencyKeyHeader = z.string().regex(IDEMPOTENCY_KEY_PATTERN).meta({
  description:
    "Makes this creating write safe to retry: a repeat with the same key and request returns the original status and body (header Idempotent-Replayed: true) and creates nothing. 1-255 characters of A-Z a-z 0-9 . _ : ~ + / = -; a UUID is a good key. Keys are scoped to the caller and route and remembered for 24 hours.",
  example: "3f0c2a9e-8f6b-4a8e-9d7c-1b2a3c4d5e6f",
});

/** The answer a handler gave; what is stored and replayed. */
export interface StoredAnswer {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

export interface IdempotencyClaim {
  scope: string;
  key: string;
  /** The lock we hold: completing or releasing only touches the row while it is still ours. */
  lockedAt: Date;
  /** True when we took over a row a crashed request left in flight. */
  tookOver: boolean;
  /** When the key was first claimed; the same for a request that takes it over. */
  createdAt: Date;
}

/** What a handler may derive ids from: the same for a request and the one that takes its key over. */
export function claimSeed(claim: IdempotencyClaim): string {
  return `${claim.scope}\n${claim.key}\n${claim.createdAt.toISOString()}`;
}

export type ClaimResult = { kind: "claimed"; claim: IdempotencyClaim } | { kind: "replay"; answer: StoredAnswer };

interface Row {
  scope: string;
  key: string;
  request_hash: string;
  state: "in_flight" | "done";
  status: number | null;
  response: unknown;
  response_headers: Record<string, string> | null;
  expires_at: Date;
  locked_at: Date;
  created_at: Date;
}

export class IdempotencyKeyReused extends DomainError {
  constructor() {
    super("idempotency_key_reused", "this Idempotency-Key was already used with a different request; use a new key");
  }
}

export class IdempotencyRequestInFlight extends Conflict {
  constructor(retryAfterSeconds: number) {
    super(
      "a request with this Idempotency-Key is still being processed; retry later",
      {},
      "idempotency_request_in_flight",
    );
    this.headers["Retry-After"] = String(retryAfterSeconds);
  }
}

/** Stable JSON: object keys sorted, so {a,b} and {b,a} hash alike. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return "null";
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

export function requestHash(request: { params: unknown; query: unknown; body: unknown }): string {
  return createHash("sha256").update(canonicalJson(request)).digest("hex");
}

export interface IdempotencyOptions {
  now: Date;
  retentionSeconds: number;
  inFlightTimeoutSeconds: number;
}

const plus = (d: Date, seconds: number) => new Date(d.getTime() + seconds * 1000);

/**
 * Claims (scope, key) for this request, or says what to answer instead. Throws IdempotencyKeyReused
 * (422) or IdempotencyRequestInFlight (409).
 */
export async function claimIdempotencyKey(
  db: Knex,
  scope: string,
  key: string,
  hash: string,
  o: IdempotencyOptions,
): Promise<ClaimResult> {
  const expiresAt = plus(o.now, o.retentionSeconds);
  // A few rounds at most: each round either decides or loses a race that changed the row under us.
  for (let round = 0; round < 5; round++) {
    const inserted = await db("idempotency_keys")
      .insert({
        scope,
        key,
        request_hash: hash,
        state: "in_flight",
        created_at: o.now,
        locked_at: o.now,
        expires_at: expiresAt,
      })
      .onConflict(["scope", "key"])
      .ignore()
      .returning("key");
    if (inserted.length === 1)
      return { kind: "claimed", claim: { scope, key, lockedAt: o.now, tookOver: false, createdAt: o.now } };

    const row = (await db("idempotency_keys").where({ scope, key }).first()) as Row | undefined;
    if (!row) continue; // released or purged between our insert and read: try again

    if (row.expires_at.getTime() <= o.now.getTime()) {
      // Expired: as good as absent. Replace it, unless someone else just did.
      const n = await db("idempotency_keys").where({ scope, key, expires_at: row.expires_at }).update({
        request_hash: hash,
        state: "in_flight",
        status: null,
        response: null,
        response_headers: null,
        created_at: o.now,
        locked_at: o.now,
        expires_at: expiresAt,
      });
      if (n === 1)
        return { kind: "claimed", claim: { scope, key, lockedAt: o.now, tookOver: false, createdAt: o.now } };
      continue;
    }
    if (row.request_hash !== hash) throw new IdempotencyKeyReused();
    if (row.state === "done") {
      return {
        kind: "replay",
        answer: { status: row.status ?? 200, body: row.response, headers: row.response_headers ?? {} },
      };
    }
    const stale = row.locked_at.getTime() + o.inFlightTimeoutSeconds * 1000 <= o.now.getTime();
    if (!stale) {
      const left = Math.ceil((row.locked_at.getTime() + o.inFlightTimeoutSeconds * 1000 - o.now.getTime()) / 1000);
      throw new IdempotencyRequestInFlight(Math.min(Math.max(left, 1), 5));
    }
    const n = await db("idempotency_keys")
      .where({ scope, key, state: "in_flight", locked_at: row.locked_at })
      .update({ locked_at: o.now, expires_at: expiresAt });
    if (n === 1)
      return { kind: "claimed", claim: { scope, key, lockedAt: o.now, tookOver: true, createdAt: row.created_at } };
  }
  throw new IdempotencyRequestInFlight(1);
}

/** Stores the final answer. Returns false when the row is no longer ours (taken over after a timeout). */
export async function completeIdempotencyKey(
  db: Knex,
  claim: IdempotencyClaim,
  answer: StoredAnswer,
): Promise<boolean> {
  const n = await db("idempotency_keys")
    .where({ scope: claim.scope, key: claim.key, state: "in_flight", locked_at: claim.lockedAt })
    .update({
      state: "done",
      status: answer.status,
      response: JSON.stringify(answer.body ?? null),
      response_headers: JSON.stringify(answer.headers),
    });
  return n === 1;
}

/** Forgets the key (after an unexpected failure), so a retry with the same key runs again. */
export async function releaseIdempotencyKey(db: Knex, claim: IdempotencyClaim): Promise<void> {
  await db("idempotency_keys")
    .where({ scope: claim.scope, key: claim.key, state: "in_flight", locked_at: claim.lockedAt })
    .del();
}

/** Deletes expired keys; returns how many. main.ts runs it periodically. */
export async function purgeExpiredIdempotencyKeys(db: Knex, now: Date): Promise<number> {
  return db("idempotency_keys").where("expires_at", "<=", now).del();
}
