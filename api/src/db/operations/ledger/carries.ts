import type { Knex } from "knex";

export interface CarryRow {
  session_id: string;
  carry: string;
  carry_divisor: string;
  charged: string;
  samples: number;
}

/**
 * Each session's charging state, created if absent and locked, in one statement: the upsert's DO UPDATE
 * takes the row lock whether it inserted or found the row (ids sorted: concurrent billers lock in order).
 */
export async function lockCarries(tx: Knex.Transaction, sessionIds: readonly string[]): Promise<Map<string, CarryRow>> {
  const ids = [...new Set(sessionIds)].sort();
  if (ids.length === 0) return new Map();
  const r = (await tx.raw(
    `INSERT INTO billing_sessions (session_id) SELECT unnest(?::text[]) ORDER BY 1
     ON CONFLICT (session_id) DO UPDATE SET session_id = excluded.session_id
     RETURNING session_id, carry::text, carry_divisor::text, charged::text, samples`,
    [ids],
  )) as { rows: CarryRow[] };
  return new Map(r.rows.map((row) => [row.session_id, row]));
}

export async function saveCarries(tx: Knex.Transaction, rows: readonly CarryRow[], at: Date): Promise<void> {
  if (rows.length === 0) return;
  await tx.raw(
    `UPDATE billing_sessions b SET carry = v.carry, carry_divisor = v.divisor, charged = v.charged, samples = v.samples, updated_at = ?
       FROM (SELECT unnest(?::text[]) AS id, unnest(?::bigint[]) AS carry, unnest(?::bigint[]) AS divisor,
                    unnest(?::bigint[]) AS charged, unnest(?::int[]) AS samples) v
      WHERE b.session_id = v.id`,
    [
      at,
      rows.map((r) => r.session_id),
      rows.map((r) => r.carry),
      rows.map((r) => r.carry_divisor),
      rows.map((r) => r.charged),
      rows.map((r) => r.samples),
    ],
  );
}
