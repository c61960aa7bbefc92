// People's accounts (super_admins): the list, create, disable, delete, and the sign-up requests to decide.
import type { BodyOf, QueryOf, ResponseOf } from "../api/client.ts";
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

/** Bulk import: starts a dry run (`dryRun`) or the import itself as a job; the answer is the job, queued. */
export function importUsers(csv: string, dryRun: boolean) {
  return api.call("createUserImport", { body: { csv, dry_run: dryRun } });
}

export function loadImport(importId: string, signal?: AbortSignal) {
  return api.call("getUserImport", { params: { importId } }, { signal });
}

/**
 * The job until it has ended, read every `everyMs`; `progress` sees each reading. Stops (throws) when
 * `signal` aborts: the page was left.
 */
export async function waitForImport(
  importId: string,
  progress: (job: ResponseOf<"getUserImport">) => void,
  signal: AbortSignal,
  everyMs = 1000,
) {
  for (;;) {
    const job = await loadImport(importId, signal);
    progress(job);
    if (job.state === "succeeded" || job.state === "failed") return job;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, everyMs);
      signal.addEventListener("abort", () => {
        clearTimeout(timer);
        reject(signal.reason);
      });
    });
  }
}

/** The import's temporary passwords: given once, then erased (a second call is 410 import_passwords_gone). */
export function takeImportPasswords(importId: string) {
  return api.call("takeUserImportPasswords", { params: { importId } });
}

/** The results file of an import (CSV), fetched with the bearer token. */
export function importResults(importId: string) {
  return api.fetchRaw(`/api/v1/users/imports/${encodeURIComponent(importId)}/results.csv`);
}
