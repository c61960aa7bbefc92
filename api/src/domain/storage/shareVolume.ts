// Who else may mount a volume: its shares, written to the row and the resource together.

import { listMembershipsOfUser } from "../../db/operations/memberships/listMembershipsOfUser.ts";
import { findProjectById } from "../../db/operations/projects/findProjectById.ts";
import { replaceVolumeShares } from "../../db/operations/volumes/replaceVolumeShares.ts";
import type { Deps } from "../../deps.ts";
import { Invalid } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { manageable, mountsOf, patchCr, priced, type VolumeView } from "./volumeParts.ts";

export interface ShareInput {
  kind: "user" | "project";
  id: string;
  access: "read_only" | "read_write";
}

/**
 * Replaces the volume's shares. Each names a user with a membership in the volume's organization or a
 * project of it; anything else is refused naming the entry (nothing is written). A read-only share
 * mounts read-only (api/src/domain/sessions/checkVolumes.ts).
 */
export async function setVolumeShares(
  deps: Deps,
  principal: Principal,
  id: string,
  shares: ShareInput[],
): Promise<VolumeView> {
  const { row } = await manageable(deps, principal, id);
  const issues: { path: (string | number)[]; message: string; code: string }[] = [];
  const seen = new Set<string>();
  for (const [i, s] of shares.entries()) {
    const key = `${s.kind}/${s.id}`;
    if (seen.has(key)) issues.push({ path: ["body", "shares", i], message: "named twice", code: "duplicate" });
    seen.add(key);
    if (s.kind === "user") {
      const ms = await listMembershipsOfUser(deps.db, s.id);
      if (!ms.some((m) => m.organization_id === row.organization_id))
        issues.push({
          path: ["body", "shares", i, "id"],
          message: "no such user in the volume's organization",
          code: "invalid_reference",
        });
    } else {
      const p = await findProjectById(deps.db, s.id);
      if (!p || p.organization_id !== row.organization_id)
        issues.push({
          path: ["body", "shares", i, "id"],
          message: "no such project in the volume's organization",
          code: "invalid_reference",
        });
    }
  }
  if (issues.length > 0) throw new Invalid("the request is invalid", issues);
  // The list's copy first, in a transaction committed only once the resource took the shares.
  const cr = await deps.db.transaction(async (trx) => {
    await replaceVolumeShares(
      trx,
      row.id,
      shares.map((s) => ({ subject_kind: s.kind, subject_id: s.id, access: s.access })),
    );
    return patchCr(deps, row, {
      shares: shares.map((s) => ({
        kind: s.kind,
        id: s.id,
        access: s.access === "read_write" ? "ReadWrite" : "ReadOnly",
      })),
    });
  });
  return priced(deps, { row, cr, mounts: await mountsOf(deps, row) });
}
