// Loaded principals, kept a few seconds per process so that an authenticated request costs no database
// round trip of its own (the list it asks for is then its only one).
//
// What keeps it exact enough (docs/dev/identity.md, "Revocation before expiry"):
// - In this process, every write to a user's identity rows (db/operations: updateUser, deleteUser, the
//   membership writes, deleting a project or an organization) calls identityChanged, which drops the
//   entry at once, and again when the write's transaction commits.
// - A load that was running while such a change happened is not stored (the generation moved): it may
//   have read the rows from before the change.
// - Other replicas are not told: an entry there lives at most `ttlMs`, the bound on how long a revocation
//   made elsewhere can go unseen.
// - The authenticator only accepts from the cache; a refusal is always decided on a fresh read.
import { type IdentityWatcher, watchIdentityChanges } from "../../db/operations/users/identityChanged.ts";
import type { PrincipalRecord } from "./loadPrincipal.ts";

/** Default lifetime of an entry, and so the cross-replica bound on a revocation (BERTH_PRINCIPAL_CACHE_SECONDS). */
export const PRINCIPAL_CACHE_SECONDS = 5;
/** Beyond this many users the oldest entries go first (about 1 KB each). */
const MAX_ENTRIES = 10_000;

export interface PrincipalCacheOptions {
  /** 0 turns the cache off: every request loads. */
  ttlMs: number;
  /** Milliseconds; injected so tests own time. */
  now: () => number;
  load: (userId: string) => Promise<PrincipalRecord | undefined>;
  /**
   * Loads several users in one round trip. Given, the misses of one turn of the event loop share a
   * single read: thousands of live event streams re-checking their callers (routes/sessions/stream.ts)
   * would otherwise each take a pool connection for a query of their own.
   */
  loadMany?: (userIds: readonly string[]) => Promise<Map<string, PrincipalRecord>>;
  maxEntries?: number;
}

interface Entry {
  record: PrincipalRecord;
  expiresAt: number;
}

export class PrincipalCache implements IdentityWatcher {
  readonly #opts: PrincipalCacheOptions;
  readonly #maxEntries: number;
  /** Insertion order is age order: the first key is the oldest entry. */
  readonly #entries = new Map<string, Entry>();
  /** One load per user at a time: a burst of misses shares it. */
  readonly #loading = new Map<string, Promise<PrincipalRecord | undefined>>();
  /** Moves on every identity change; a load that saw it move stores nothing. */
  #generation = 0;
  /** The misses of this turn of the event loop, read together (loadMany). */
  #batch:
    | { waiting: Map<string, ((r: PrincipalRecord | undefined) => void)[]>; failed: ((err: unknown) => void)[] }
    | undefined;

  constructor(opts: PrincipalCacheOptions) {
    this.#opts = opts;
    this.#maxEntries = opts.maxEntries ?? MAX_ENTRIES;
    if (opts.ttlMs > 0) watchIdentityChanges(this);
  }

  /** The cached record, if any and not expired. */
  get(userId: string): PrincipalRecord | undefined {
    const e = this.#entries.get(userId);
    if (!e) return undefined;
    if (e.expiresAt <= this.#opts.now()) {
      this.#entries.delete(userId);
      return undefined;
    }
    return e.record;
  }

  /** Reads the user from the database (joining a read already under way) and keeps it. */
  load(userId: string): Promise<PrincipalRecord | undefined> {
    if (this.#opts.ttlMs <= 0) return this.#opts.load(userId);
    const running = this.#loading.get(userId);
    if (running) return running;
    const generation = this.#generation;
    const p = this.#read(userId).then(
      (record) => {
        if (this.#loading.get(userId) === p) this.#loading.delete(userId);
        // Not kept: an unknown user (nothing to keep), or a change since the read began.
        if (record && generation === this.#generation) this.#keep(userId, record);
        return record;
      },
      (err: unknown) => {
        if (this.#loading.get(userId) === p) this.#loading.delete(userId);
        throw err;
      },
    );
    this.#loading.set(userId, p);
    return p;
  }

  /** One user's read: alone, or in the batch of this turn when the cache can load many. */
  #read(userId: string): Promise<PrincipalRecord | undefined> {
    const loadMany = this.#opts.loadMany;
    if (!loadMany) return this.#opts.load(userId);
    if (!this.#batch) {
      const batch = new Map<string, ((r: PrincipalRecord | undefined) => void)[]>();
      const failed: ((err: unknown) => void)[] = [];
      this.#batch = { waiting: batch, failed };
      setImmediate(() => {
        this.#batch = undefined;
        loadMany([...batch.keys()]).then(
          (records) => {
            for (const [id, resolves] of batch) for (const r of resolves) r(records.get(id));
          },
          (err: unknown) => {
            for (const f of failed) f(err);
          },
        );
      });
    }
    const { waiting, failed } = this.#batch;
    return new Promise((resolve, reject) => {
      const list = waiting.get(userId) ?? [];
      list.push(resolve);
      waiting.set(userId, list);
      failed.push(reject);
    });
  }

  identityChanged(userId: string | null): void {
    this.#generation += 1;
    if (userId === null) {
      this.#entries.clear();
      this.#loading.clear();
    } else {
      this.#entries.delete(userId);
      // A request arriving after the change must not join a read that began before it.
      this.#loading.delete(userId);
    }
  }

  get size(): number {
    return this.#entries.size;
  }

  #keep(userId: string, record: PrincipalRecord): void {
    this.#entries.delete(userId);
    while (this.#entries.size >= this.#maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
    // Shared by every request of this user for a while: nobody may change it in place.
    for (const m of record.principal.memberships) Object.freeze(m);
    Object.freeze(record.principal.memberships);
    Object.freeze(record.principal);
    this.#entries.set(userId, { record: Object.freeze(record), expiresAt: this.#opts.now() + this.#opts.ttlMs });
  }
}
