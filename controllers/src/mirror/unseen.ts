// Creates this controller made that its informer has not shown yet. A reconcile woken in that window (by
// the Service's watch event, a mirror update, a resync) sees no pod in the store and would POST it again,
// only to get 409: one wasted request per race, at 1,000 sessions 0.15–0.85 per session.
//
// The record is kept beside the informer, never in its store: an earlier fix put the create's answer
// into the pods informer, and a delete racing it (the DELETED event arriving before, or instead of, the
// object the store was given) left a phantom pod there that nothing would ever remove. A record here can
// only suppress a create for `ttlMs`; it goes when the watch shows an object of that name (the one
// created, when its uid is known), and expires on its own when the watch never does (a relist that
// skipped it): then the next reconcile looks at the store alone again.
export interface UnseenCreatesOptions {
  ttlMs: number;
  now(): number;
}

export class UnseenCreates {
  readonly #records = new Map<string, { uid: string | undefined; until: number }>();
  readonly #o: UnseenCreatesOptions;
  #nextSweep = 0;

  constructor(o: UnseenCreatesOptions) {
    this.#o = o;
  }

  get size(): number {
    return this.#records.size;
  }

  /** A create answered 201 (with the new object's uid) or 409 (something of that name is there: no uid). */
  created(key: string, uid?: string): void {
    const now = this.#o.now();
    this.#records.set(key, { uid, until: now + this.#o.ttlMs });
    // Records of objects that were never seen and never asked about again (their mirror went away).
    if (now >= this.#nextSweep) {
      this.#nextSweep = now + this.#o.ttlMs;
      for (const [k, r] of this.#records) if (r.until <= now) this.#records.delete(k);
    }
  }

  /** The informer reported the object (added, changed or deleted): the store now tells the truth. */
  seen(key: string, uid: string | undefined): void {
    const r = this.#records.get(key);
    if (r && (r.uid === undefined || r.uid === uid)) this.#records.delete(key);
  }

  /** Milliseconds the record of `key` is still trusted, or undefined when there is none (or it expired). */
  pending(key: string): number | undefined {
    const r = this.#records.get(key);
    if (!r) return undefined;
    const left = r.until - this.#o.now();
    if (left > 0) return left;
    this.#records.delete(key);
    return undefined;
  }
}
