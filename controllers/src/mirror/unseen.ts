// Creates this controller made that its informer has not shown yet. A reconcile woken in that window (by
// a mirror update, the policy's watch event, a resync) sees no pod in the store and would POST it again,
// only to get 409: one wasted request per race, at 1,000 sessions 0.15–0.85 per session.
//
// The record is kept beside the informer, never in its store: an earlier fix put the create's answer
// into the pods informer, and a delete racing it (the DELETED event arriving before, or instead of, the
// object the store was given) left a phantom pod there that nothing would ever remove. A record here can
// only suppress a create; it goes
// - when the watch shows an object of that name (the one created, when its uid is known), added, changed
//   or deleted: the store tells the truth from then on;
// - when the informer has gone past the create without showing it (its last list or watch event is at or
//   past the create's resourceVersion, Informer.passed: watches deliver in resourceVersion order, so the
//   object was deleted before the informer looked, and another create is right);
// - at the latest after `ttlMs` (a 409 whose object is not known, or a watch that does not move).
// A fixed few seconds alone was too short: at 1,000 sessions on a loaded 2-core machine the operator's
// pods watch ran more than 5 s behind its creates, and 0.3–0.4 creates per session still got 409.
export interface UnseenCreatesOptions {
  ttlMs: number;
  now(): number;
  /** Whether the informer's store reflects every change up to this resourceVersion (Informer.passed). */
  passed(resourceVersion: string): boolean;
}

export class UnseenCreates {
  readonly #records = new Map<string, { uid: string | undefined; rv: string | undefined; until: number }>();
  readonly #o: UnseenCreatesOptions;
  #nextSweep = 0;

  constructor(o: UnseenCreatesOptions) {
    this.#o = o;
  }

  get size(): number {
    return this.#records.size;
  }

  /**
   * A create answered 201 (with the new object's uid and resourceVersion) or 409 (something of that name
   * is there: neither known).
   */
  created(key: string, uid?: string, resourceVersion?: string): void {
    const now = this.#o.now();
    this.#records.set(key, { uid, rv: resourceVersion, until: now + this.#o.ttlMs });
    // Records of objects that were never seen and never asked about again (their mirror went away).
    if (now >= this.#nextSweep) {
      this.#nextSweep = now + this.#o.ttlMs;
      for (const [k, r] of this.#records) if (r.until <= now) this.#records.delete(k);
    }
  }

  /** The informer reported an object of this key (added, changed or deleted): the store now tells the truth. */
  seen(key: string, uid: string | undefined): void {
    const r = this.#records.get(key);
    if (r && (r.uid === undefined || r.uid === uid)) this.#records.delete(key);
  }

  /** Milliseconds the record of `key` is still trusted, or undefined when there is none (or it expired). */
  pending(key: string): number | undefined {
    const r = this.#records.get(key);
    if (!r) return undefined;
    const left = r.until - this.#o.now();
    if (left > 0 && (r.rv === undefined || !this.#o.passed(r.rv))) return left;
    this.#records.delete(key);
    return undefined;
  }
}
