// A private image's owner is a reference to an account: it must name one that exists and is enabled, or
// the image would belong to nobody who can see it (and whatever text was sent would reach the resource).
import { findUserById } from "../../db/operations/users/findUserById.ts";
import type { Deps } from "../../deps.ts";
import { Invalid } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";

export async function checkImageOwner(
  deps: Pick<Deps, "db">,
  principal: Principal,
  owner: string | undefined,
): Promise<void> {
  // Only a super_admin changes the catalog; anyone else is refused by the write itself, and must not learn
  // from this check which accounts exist.
  if (owner === undefined || !principal.isSuperAdmin) return;
  const user = await findUserById(deps.db, owner);
  if (!user || user.disabled)
    throw new Invalid("the image is invalid", [
      { path: ["body", "owner"], message: "no enabled account has this id", code: "invalid_reference" },
    ]);
}
