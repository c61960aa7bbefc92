import type { Knex } from "knex";

/** Enabled super_admins, so that the last one cannot demote, disable or delete itself away. */
export async function countActiveSuperAdmins(db: Knex): Promise<number> {
  const [r] = await db("users")
    .where({ is_super_admin: true, disabled: false })
    .count<{ count: string }[]>({ count: "*" });
  return Number(r?.count ?? 0);
}
