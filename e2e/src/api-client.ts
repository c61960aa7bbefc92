// The console's typed client (generated from api/openapi.json) for journeys and e2e tests that read or set
// up state through the API: each call and its answer is checked against the contract, with no `any` in
// between. A refusal is the client's ApiError; `refusalOf` hands it to the test's assertions.
import { ApiClient, ApiError } from "@berth/console/client";

/** The API at `baseUrl` as the holder of `token` calls it; `seen` is told each raw answer (its headers). */
export function apiAs(baseUrl: string, token: string, seen?: (res: Response) => void): ApiClient {
  return new ApiClient({
    baseUrl,
    token: () => token,
    ...(seen
      ? {
          fetch: async (url: string | URL | Request, init?: RequestInit) => {
            const res = await fetch(url, init);
            seen(res);
            return res;
          },
        }
      : {}),
  });
}

/** The session bed's API (e2e/src/sessions/harness.ts) as `who` calls it. */
export function bedApi(bed: { t: { api: { url: string } } }, who: { token: string }): ApiClient {
  return apiAs(bed.t.api.url, who.token);
}

/** A call's answer with the status it came with, for a test that holds the API to an exact 201 or 202. */
export async function answered<T>(
  bed: { t: { api: { url: string } } },
  who: { token: string },
  call: (api: ApiClient) => Promise<T>,
): Promise<{ status: number; body: T }> {
  let status = 0;
  const body = await call(
    apiAs(bed.t.api.url, who.token, (res) => {
      status = res.status;
    }),
  );
  return { status, body };
}

/** The ApiError a call was refused with; a call that was answered fails the journey. */
export async function refusalOf(call: Promise<unknown>): Promise<ApiError> {
  try {
    await call;
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error("the call was answered where a refusal was expected");
}

/** A call's answer or its refusal as a value, for polls that wait for the one or the other. */
export async function outcomeOf<T>(
  call: Promise<T>,
): Promise<{ ok: true; body: T } | { ok: false; refusal: ApiError }> {
  try {
    return { ok: true, body: await call };
  } catch (e) {
    if (e instanceof ApiError) return { ok: false, refusal: e };
    throw e;
  }
}
