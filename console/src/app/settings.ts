// The installation's settings (super_admins).
import type { BodyOf } from "../api/client.ts";
import { api } from "./context.ts";

export function loadSystemSettings(signal?: AbortSignal) {
  return api.call("getSystemSettings", {}, { signal });
}

export function updateSystemSettings(body: BodyOf<"updateSystemSettings">) {
  return api.call("updateSystemSettings", { body });
}
