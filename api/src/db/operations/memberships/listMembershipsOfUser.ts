import type { Knex } from "knex";
import type { MembershipRow } from "./types.ts";

export async function listMembershipsOfUser(db: Knex, userId: string): Promise<MembershipRow[]> {
  return db<MembershipRow>("memberships").where({ user_id: userId }).orderBy("id");
}
