import type { Knex } from "knex";

export interface SignupRequestRow {
  user_id: string;
  email: string;
  organization_id: string | null;
  status: "pending" | "approved" | "denied";
  created_at: Date;
  decided_by: string | null;
  decided_at: Date | null;
}

export async function insertSignupRequest(
  db: Knex,
  r: { userId: string; email: string; organizationId: string | null; at: Date },
): Promise<void> {
  await db("signup_requests").insert({
    user_id: r.userId,
    email: r.email,
    organization_id: r.organizationId,
    status: "pending",
    created_at: r.at,
  });
}

export function signupRequestsQuery(db: Knex, status?: string): Knex.QueryBuilder {
  const q = db("signup_requests").select("*");
  if (status) q.where({ status });
  return q.orderBy([
    { column: "created_at", order: "asc" },
    { column: "user_id", order: "asc" },
  ]);
}

/** Decides a pending request; undefined when there is none pending for this user. */
export async function decideSignupRequest(
  db: Knex,
  userId: string,
  d: { status: "approved" | "denied"; by: string; at: Date },
): Promise<SignupRequestRow | undefined> {
  const [row] = (await db("signup_requests")
    .where({ user_id: userId, status: "pending" })
    .update({ status: d.status, decided_by: d.by, decided_at: d.at })
    .returning("*")) as SignupRequestRow[];
  return row;
}
