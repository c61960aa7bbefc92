// The gateway's questions to the control plane, on GET /internal/connect/verify with this cluster's
// operator token (re-read from its file for every call, as the operator does):
//
//   redeem: ?cr={cr}  + header X-Berth-Connect-Token: <svc_cnx>  -> spends the token, answers the grant
//   check:  ?cr={cr}&session={id}&user={id}                     -> may this cookie be renewed / why is
//                                                                    the session's upstream silent?
//
// The token travels in a header, not the query, so no access log on the way ever holds it.
// Every outcome is one of: a grant, a refusal the user should see, or "unavailable" (network, timeout,
// 5xx, and also 401/403 on our own operator token: the gateway cannot verify, so the user gets 401).
import { readFile } from "node:fs/promises";

export interface Grant {
  sessionId: string;
  crName: string;
  clusterId: string;
  userId: string;
  phase: string;
}

export type Refusal = {
  /** forbidden (token used/expired/elsewhere, not allowed), conflict (session not running), not_found (gone) */
  code: string;
  reason: string;
  phase?: string;
  message: string;
};

export type VerifyOutcome =
  | { kind: "grant"; grant: Grant }
  | { kind: "refused"; refusal: Refusal }
  | { kind: "unavailable"; why: string };

export interface ConnectVerifier {
  redeem(input: { cr: string; token: string }): Promise<VerifyOutcome>;
  check(input: { cr: string; sessionId: string; userId: string }): Promise<VerifyOutcome>;
}

export interface HttpVerifierOptions {
  /** Base URL of the control plane's internal listener. */
  baseUrl: string;
  /** File with this cluster's RS256 operator token. */
  tokenFile: string;
  /** A verification that takes longer is "unavailable" (the user gets 401, never a hang). Default 5 s. */
  timeoutMs?: number;
}

export function httpVerifier(opts: HttpVerifierOptions): ConnectVerifier {
  const base = opts.baseUrl.replace(/\/+$/, "");
  const timeoutMs = opts.timeoutMs ?? 5000;
  async function call(query: URLSearchParams, extra: Record<string, string>): Promise<VerifyOutcome> {
    let token: string;
    try {
      token = (await readFile(opts.tokenFile, "utf8")).trim();
    } catch (e) {
      return {
        kind: "unavailable",
        why: `operator token file: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      };
    }
    if (!token) return { kind: "unavailable", why: "operator token file is empty" };
    let res: Response;
    let body: unknown;
    try {
      res = await fetch(`${base}/internal/connect/verify?${query}`, {
        headers: { authorization: `Bearer ${token}`, accept: "application/json", ...extra },
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await res.text();
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = undefined;
      }
    } catch (e) {
      const err = e as Error & { cause?: { code?: string; message?: string; errors?: Array<{ code?: string }> } };
      const cause = err.cause?.code ?? err.cause?.errors?.[0]?.code ?? err.cause?.message;
      return {
        kind: "unavailable",
        why:
          err.name === "TimeoutError"
            ? `no answer within ${timeoutMs} ms`
            : `${err.message}${cause ? ` (${cause})` : ""}`,
      };
    }
    return classify(res.status, body);
  }
  return {
    redeem: ({ cr, token }) => call(new URLSearchParams({ cr }), { "x-berth-connect-token": token }),
    check: ({ cr, sessionId, userId }) => call(new URLSearchParams({ cr, session: sessionId, user: userId }), {}),
  };
}

/** Maps the verify route's answer to an outcome (exported for tests). */
export function classify(status: number, body: unknown): VerifyOutcome {
  if (status === 200) {
    const b = body as
      | { session_id?: unknown; cr?: unknown; cluster_id?: unknown; user_id?: unknown; phase?: unknown }
      | undefined;
    if (
      b &&
      typeof b.session_id === "string" &&
      typeof b.cr === "string" &&
      typeof b.cluster_id === "string" &&
      typeof b.user_id === "string"
    ) {
      return {
        kind: "grant",
        grant: {
          sessionId: b.session_id,
          crName: b.cr,
          clusterId: b.cluster_id,
          userId: b.user_id,
          phase: String(b.phase ?? "Running"),
        },
      };
    }
    return { kind: "unavailable", why: "verify answered 200 without a grant" };
  }
  const err = (
    body as { error?: { code?: string; message?: string; details?: { reason?: string; phase?: string } } } | undefined
  )?.error;
  // 403 carries a connect reason when the token is refused; a 403 without one is the internal plane
  // refusing *us* (closed to this address, or a token of another cluster): we cannot verify.
  if ((status === 403 || status === 409 || status === 404) && err?.details?.reason) {
    return {
      kind: "refused",
      refusal: {
        code: err.code ?? String(status),
        reason: err.details.reason,
        ...(err.details.phase ? { phase: err.details.phase } : {}),
        message: err.message ?? "",
      },
    };
  }
  return { kind: "unavailable", why: `verify answered ${status}${err?.code ? ` ${err.code}` : ""}` };
}
