// The console's typed client (generated from api/openapi.json) for journeys that read or set up state
// through the API: each call and its answer is checked against the contract, with no `any` in between.
// A journey that asserts on a refusal's status and envelope still sends it raw.
import { ApiClient } from "@berth/console/client";

/** The API at `baseUrl` as the holder of `token` calls it. */
export function apiAs(baseUrl: string, token: string): ApiClient {
  return new ApiClient({ baseUrl, token: () => token });
}
