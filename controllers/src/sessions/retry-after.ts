/** Not a failure: a precondition that time resolves (requeue after `ms`, no backoff). */
export class RetryAfter extends Error {
  readonly ms: number;
  constructor(ms: number, message: string) {
    super(message);
    this.ms = ms;
  }
}
