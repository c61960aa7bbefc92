// A session holds its GPUs once at any moment, so a moment of its time is charged once, whatever the
// samples say. Samples that overlap time already charged (an operator restarted with another interval
// length mints new ids for the same time; a former cluster reports a pod that outlived its pause) are
// charged only for what is new. Pure.

/** Periods already charged, per session, in epoch milliseconds; kept merged and sorted. */
export class Coverage {
  readonly #bySession = new Map<string, [number, number][]>();

  /** Charged periods as read from the ledger's samples. */
  static of(periods: readonly { session: string; start: Date; end: Date }[]): Coverage {
    const c = new Coverage();
    for (const p of periods) c.add(p.session, p.start.getTime(), p.end.getTime());
    return c;
  }

  /** Milliseconds of [start, end) not yet charged for the session. */
  uncovered(session: string, start: number, end: number): number {
    let left = Math.max(0, end - start);
    for (const [s, e] of this.#bySession.get(session) ?? []) {
      if (s >= end) break;
      left -= Math.max(0, Math.min(e, end) - Math.max(s, start));
    }
    return left;
  }

  /** Marks [start, end) charged for the session. */
  add(session: string, start: number, end: number): void {
    if (end <= start) return;
    const merged: [number, number][] = [];
    let cur: [number, number] = [start, end];
    for (const p of this.#bySession.get(session) ?? []) {
      if (p[1] < cur[0]) merged.push(p);
      else if (p[0] > cur[1]) {
        merged.push(cur);
        cur = p;
      } else cur = [Math.min(p[0], cur[0]), Math.max(p[1], cur[1])];
    }
    merged.push(cur);
    this.#bySession.set(session, merged);
  }
}
