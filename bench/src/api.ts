// The API as a bench calls it: the console's typed client (generated from api/openapi.json), so each call
// and its answer is checked against the contract with no `any` in between. A refusal is an ApiError.
//
// Benches under load count answers rather than stop at the first refusal: `answering` gives every answer
// as a value (its status, and the typed body or the envelope's code) and `retrying` sends again what a
// loaded machine left unanswered or turned away for a moment.
import {
  ApiClient,
  ApiError,
  type CallOptions,
  type OperationId,
  type RequestInput,
  type ResponseOf,
} from "@berth/console/client";

/** The API at `baseUrl` as the holder of `who.token` calls it. */
export function apiAs(baseUrl: string, who: { token: string }): ApiClient {
  return new ApiClient({ baseUrl, token: () => who.token });
}

/** What a call of `op` takes after its id, as ApiClient.call takes it. */
export type ArgsOf<K extends OperationId> =
  Partial<RequestInput<K>> extends RequestInput<K> ? [RequestInput<K>?, CallOptions?] : [RequestInput<K>, CallOptions?];

/** One answer: its status always; the body as the contract types it, or the error envelope's code. */
export type Answer<K extends OperationId> =
  | { ok: true; status: number; body: ResponseOf<K> }
  | { ok: false; status: number; code: string; message: string };

/** An answer as the figures count it: its status, and the envelope's code when refused ("201", "503 unavailable"). */
export const causeOf = (a: Answer<OperationId>): string => `${a.status} ${a.ok ? "" : a.code}`.trim();

/** Calls `op` as `who`; answers every status, and throws only when there is no answer (status 0 then). */
export type Caller = <K extends OperationId>(who: { token: string }, op: K, ...args: ArgsOf<K>) => Promise<Answer<K>>;

/**
 * The API at `baseUrl()` (read per call: a restarted API may come back elsewhere), each request bounded by
 * `timeoutMs`: past every bound the API sets itself (a 30 s query, a 20 s wait for a connection).
 */
export function answering(baseUrl: () => string, timeoutMs = 90_000): Caller {
  return async (who, op, ...args) => {
    let status = 0;
    // fetch's own failure, kept: its cause (ECONNRESET, …) says more than the client's network_error.
    let lost: unknown;
    const client = new ApiClient({
      baseUrl: baseUrl(),
      token: () => who.token,
      fetch: async (url, init) => {
        const bound = AbortSignal.timeout(timeoutMs);
        try {
          const res = await fetch(url, {
            ...init,
            signal: init?.signal ? AbortSignal.any([init.signal, bound]) : bound,
          });
          status = res.status;
          return res;
        } catch (e) {
          lost = e;
          throw e;
        }
      },
    });
    try {
      // The client's own overloads, spread from the same tuple: TypeScript cannot see the two are one type.
      const body = await (client.call as (op: OperationId, ...a: unknown[]) => Promise<ResponseOf<typeof op>>)(
        op,
        ...args,
      );
      return { ok: true, status, body };
    } catch (e) {
      if (e instanceof ApiError && e.status > 0)
        return { ok: false, status: e.status, code: e.code, message: e.message };
      throw lost ?? e;
    }
  };
}

export interface Retry {
  /** Tries in all, the first one included. */
  attempts: number;
  /** The wait before try `n + 1`, after try `n` (from 1). */
  backoffMs(n: number): number;
  /** Whether to try again: `answer` is undefined when there was none. */
  again(op: OperationId, answer: Answer<OperationId> | undefined, options: CallOptions | undefined): boolean;
  /** Told when the last try got no answer, which is then answered as status 0, code no_answer. */
  noAnswer?(op: OperationId, why: string, attempts: number): void;
}

/** `call`, sending again what `retry.again` says is safe and worth it; no answer at the end is status 0. */
export function retrying(call: Caller, retry: Retry): Caller {
  return async (who, op, ...args) => {
    const options = args[1];
    for (let n = 1; ; n++) {
      let answer: Awaited<ReturnType<typeof call<typeof op>>> | undefined;
      let why = "";
      try {
        answer = await call(who, op, ...args);
      } catch (e) {
        why = (e as Error & { cause?: { code?: string } }).cause?.code ?? (e as Error).message;
      }
      if (n < retry.attempts && retry.again(op, answer, options)) {
        await new Promise((r) => setTimeout(r, retry.backoffMs(n)));
        continue;
      }
      if (answer) return answer;
      retry.noAnswer?.(op, why, n);
      return { ok: false, status: 0, code: "no_answer", message: why };
    }
  };
}
