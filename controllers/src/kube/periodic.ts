// The one periodic pass of the house: every leader-only loop of the worker, every controller's resync and
// every operator round runs on it instead of its own timer and stop flag (scripts/boundaries.test.ts keeps
// it so). A pass runs, then the next one `intervalMs` after it ends: a slow pass delays the next and never
// overlaps it, and a failed one is handed to `onError` with the next pass as its retry (every pass is
// level-based). `stop()` cancels the wait and resolves once the pass in flight, if any, has ended.

export interface PeriodicPassOptions {
  /** The wait between the end of one pass and the start of the next. */
  intervalMs: number;
  pass(): Promise<unknown>;
  /** A pass that threw (the next pass retries it). */
  onError(err: unknown): void;
  /** The first pass at start (the default), or one interval after it. */
  immediate?: boolean;
  /** The wait does not keep the process alive (the operator's rounds, the controllers' resyncs). */
  unref?: boolean;
}

export class PeriodicPass {
  readonly #o: PeriodicPassOptions;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  /** Bumped by every start and stop: a pass of an earlier start schedules nothing after it ends. */
  #epoch = 0;
  #stopped = true;

  constructor(o: PeriodicPassOptions) {
    this.#o = o;
  }

  /** True from start() until stop(). */
  get running(): boolean {
    return !this.#stopped;
  }

  /** Starts the passes; a second start while running does nothing. */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    const epoch = ++this.#epoch;
    if (this.#o.immediate ?? true) this.#run(epoch);
    else this.#wait(epoch);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#epoch++;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  #run(epoch: number): void {
    if (epoch !== this.#epoch) return;
    let pass: Promise<unknown>;
    try {
      pass = this.#o.pass();
    } catch (err) {
      pass = Promise.reject(err);
    }
    const running = pass
      .then(
        () => undefined,
        (err: unknown) => this.#o.onError(err),
      )
      .finally(() => {
        if (this.#running === running) this.#running = undefined;
        this.#wait(epoch);
      });
    this.#running = running;
  }

  #wait(epoch: number): void {
    if (epoch !== this.#epoch) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#run(epoch);
    }, this.#o.intervalMs);
    if (this.#o.unref) this.#timer.unref?.();
  }
}
