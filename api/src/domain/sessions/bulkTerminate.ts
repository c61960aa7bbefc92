// Terminate many sessions: one result per id, in the order given; one failure never stops the others.

import type { SessionView } from "../../db/operations/sessions/view.ts";
import type { Deps } from "../../deps.ts";
import { DomainError } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { terminateSession } from "./terminateSession.ts";

export type BulkResult =
  | { id: string; status: "accepted"; session: SessionView }
  | { id: string; status: "refused"; error: { code: string; message: string; details: Record<string, unknown> } };

export async function bulkTerminate(deps: Deps, principal: Principal, ids: readonly string[]): Promise<BulkResult[]> {
  const unique = [...new Set(ids)];
  const results = new Map<string, BulkResult>();
  // A few at a time: each is a read and a write on the management cluster.
  for (let i = 0; i < unique.length; i += 8) {
    await Promise.all(
      unique.slice(i, i + 8).map(async (id) => {
        try {
          results.set(id, { id, status: "accepted", session: await terminateSession(deps, principal, id) });
        } catch (e) {
          if (!(e instanceof DomainError) || e.status >= 500) throw e;
          results.set(id, { id, status: "refused", error: { code: e.code, message: e.message, details: e.details } });
        }
      }),
    );
  }
  return unique.map((id) => results.get(id) as BulkResult);
}
