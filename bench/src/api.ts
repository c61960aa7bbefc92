// The API as a bench calls it: the console's typed client (generated from api/openapi.json), so each call
// and its answer is checked against the contract with no `any` in between. A refusal is an ApiError.
import { ApiClient } from "@berth/console/client";

/** The API at `baseUrl` as the holder of `who.token` calls it. */
export function apiAs(baseUrl: string, who: { token: string }): ApiClient {
  return new ApiClient({ baseUrl, token: () => who.token });
}
