// People's accounts (super_admins): the list, create, disable, delete, and the sign-up requests to decide.
import type { BodyOf, QueryOf } from "../api/client.ts";
import { api } from "./context.ts";

export function loadUsers(email: string | undefined, page: number, signal?: AbortSignal) {
  return api.call("listUsers", { query: { email, page, size: 20 } }, { signal });
}

export function createUser(body: BodyOf<"createUser">) {
  return api.call("createUser", { body });
}

export function setUserDisabled(userId: string, disabled: boolean) {
  return api.call("updateUser", { params: { userId }, body: { disabled } });
}

export function deleteUser(userId: string) {
  return api.call("deleteUser", { params: { userId } });
}

export function loadSignupRequests(
  status: QueryOf<"listSignupRequests">["status"],
  page: number,
  signal?: AbortSignal,
) {
  return api.call("listSignupRequests", { query: { status, page, size: 25 } }, { signal });
}

export function decideSignup(userId: string, decision: "approve" | "deny") {
  return api.call(decision === "approve" ? "approveSignup" : "denySignup", { params: { userId } });
}

/** Bulk import: a dry run (`dryRun`) or the import itself; the answer has every row's outcome. */
export function importUsers(csv: string, dryRun: boolean) {
  return api.call("createUserImport", { body: { csv, dry_run: dryRun } });
}

/** The results file of an import (CSV), fetched with the bearer token. */
export function importResults(importId: string) {
  return api.fetchRaw(`/api/v1/users/imports/${encodeURIComponent(importId)}/results.csv`);
}
