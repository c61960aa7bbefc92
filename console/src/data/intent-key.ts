// One Idempotency-Key per intent (one click of "Allocate"): a retry after a lost answer reuses it, so the
// credits move once; an answer, success or refusal, ends the intent, so the next identical movement is a
// new one (the API replays a key's first answer for 24 hours, refusals included).
export class IntentKey {
  #key: string;
  readonly #make: () => string;
  constructor(make: () => string) {
    this.#make = make;
    this.#key = make();
  }
  get key(): string {
    return this.#key;
  }
  /** Call with the error, or nothing after a success. */
  settle(err?: unknown): void {
    const e = err as { status?: unknown; code?: unknown } | undefined;
    const unanswered =
      e !== undefined &&
      (e.status === 0 ||
        (typeof e.status === "number" && e.status >= 500) ||
        e.code === "idempotency_request_in_flight");
    if (!unanswered) this.#key = this.#make();
  }
}
