// Helpers for tests against the bed: polling for a state, and the HTTP status of a client-node call.

/** Polls until `probe` returns something other than undefined/false; fails with the last observation. */
export async function eventually<T>(
  probe: () => Promise<T | undefined | false>,
  opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      const detail = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out waiting for ${opts.what ?? "a condition"} (last: ${detail})`);
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 100));
  }
}

/** The HTTP status of a failed client-node call (ApiException.code), or undefined. */
export function statusOf(err: unknown): number | undefined {
  return typeof err === "object" && err !== null && "code" in err && typeof err.code === "number"
    ? err.code
    : undefined;
}

/** Runs `call` and returns its HTTP status: 200 when it succeeds, the ApiException's code otherwise. */
export async function statusFrom(call: () => Promise<unknown>): Promise<number> {
  try {
    await call();
    return 200;
  } catch (err) {
    const code = statusOf(err);
    if (code === undefined) throw err;
    return code;
  }
}
