// The console's typed client (generated from api/openapi.json) for journeys that read or set up state
// through the API: each call and its answer is checked against the contract, with no `any` in between.
// A refusal is the client's ApiError; `refusalOf` hands it to the journey's assertions.
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
