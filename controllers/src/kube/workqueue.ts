// A work queue as controller-runtime has it: a key is processed by at most one worker at a time, a key
// added while it is being processed is processed once more afterwards, failures are retried with capped
// exponential backoff per key, and `addAfter` schedules a key for later (waiting on time, never looping).

export interface WorkQueueOptions {
  concurrency: number;
  process(key: string): Promise<{ requeueAfterMs?: number } | undefined>;
  onError?(key: string, err: unknown, attempt: number): void;
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Keys are queued but none is processed until release() (a controller still reading what it needs). */
  held?: boolean;
}

export class WorkQueue {
  readonly #o: WorkQueueOptions;
  readonly #queue: string[] = [];
  readonly #queued = new Set<string>();
  readonly #active = new Set<string>();
  readonly #dirty = new Set<string>();
  readonly #timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  readonly #failures = new Map<string, number>();
  #running = 0;
  #stopped = false;
  #held: boolean;
  #idle: (() => void)[] = [];
  processed = 0;

  constructor(o: WorkQueueOptions) {
    this.#o = o;
    this.#held = o.held ?? false;
  }

  /** Starts processing the keys queued while held. */
  release(): void {
    this.#held = false;
    this.#pump();
  }

  get length(): number {
    return this.#queue.length + this.#active.size;
  }

  add(key: string): void {
    if (this.#stopped) return;
    if (this.#active.has(key)) {
      this.#dirty.add(key);
      return;
    }
    if (this.#queued.has(key)) return;
    this.#queued.add(key);
    this.#queue.push(key);
    this.#pump();
  }

  /** Adds the key after `ms`; an earlier pending schedule wins. */
  addAfter(key: string, ms: number): void {
    if (this.#stopped) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const at = Date.now() + ms;
    const existing = this.#timers.get(key);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.#timers.delete(key);
      this.add(key);
    }, ms);
    timer.unref?.();
    this.#timers.set(key, { at, timer });
  }

  #pump(): void {
    while (!this.#stopped && !this.#held && this.#running < this.#o.concurrency && this.#queue.length > 0) {
      const key = this.#queue.shift() as string;
      this.#queued.delete(key);
      this.#active.add(key);
      this.#running++;
      void this.#run(key);
    }
    if (this.#running === 0 && this.#queue.length === 0) for (const f of this.#idle.splice(0)) f();
  }

  async #run(key: string): Promise<void> {
    try {
      const r = await this.#o.process(key);
      this.#failures.delete(key);
      this.processed++;
      if (r?.requeueAfterMs !== undefined) this.addAfter(key, r.requeueAfterMs);
    } catch (err) {
      const n = (this.#failures.get(key) ?? 0) + 1;
      this.#failures.set(key, n);
      this.#o.onError?.(key, err, n);
      const delay = Math.min(this.#o.maxDelayMs ?? 30_000, (this.#o.baseDelayMs ?? 100) * 2 ** Math.min(n - 1, 12));
      this.addAfter(key, delay * (0.75 + Math.random() / 2));
    } finally {
      this.#active.delete(key);
      this.#running--;
      if (this.#dirty.delete(key)) this.add(key);
      this.#pump();
    }
  }

  /** Resolves when nothing is queued or running (timers aside). */
  drained(): Promise<void> {
    if (this.#running === 0 && this.#queue.length === 0) return Promise.resolve();
    return new Promise((r) => this.#idle.push(r));
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const t of this.#timers.values()) clearTimeout(t.timer);
    this.#timers.clear();
    this.#queue.length = 0;
    this.#queued.clear();
    // The running keys finish; the last one's #pump resolves this.
    await this.drained();
  }
}
