// The person's own account: signing in and up, the password, and which notifications they receive.
import type { BodyOf } from "../api/client.ts";
import { api } from "./context.ts";

export function login(email: string, password: string) {
  return api.call("login", { body: { email, password } });
}

export function signUp(body: BodyOf<"signUp">) {
  return api.call("signUp", { body });
}

export function changePassword(current: string, next: string) {
  return api.call("changePassword", { body: { current_password: current, new_password: next } });
}

export function loadNotificationPreferences(signal?: AbortSignal) {
  return api.call("getNotificationPreferences", {}, { signal });
}

export function setNotificationPreference(
  kind: BodyOf<"updateNotificationPreferences">["preferences"][number]["kind"],
  enabled: boolean,
) {
  return api.call("updateNotificationPreferences", { body: { preferences: [{ kind, enabled }] } });
}
