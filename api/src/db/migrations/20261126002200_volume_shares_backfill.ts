import type { Knex } from "knex";

// Shares set before volume_shares existed (20261126001800) live only in the Volume resources'
// `spec.shares`, so "shared with me" lists missed them. A migration cannot read the management cluster,
// but the audit log holds every share request with its outcome and its parsed body (`diff.after`: the
// whole list, since a share replaces the list): a volume's last successful one is what its resource took.
// Volumes that already have rows were shared since (the route writes both), and so are left as they are;
// a last request that emptied the list adds nothing. Requests older than the audit log's `diff` column or
// purged by its retention cannot be recovered here: such shares show once they are set again.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    INSERT INTO volume_shares (volume_id, subject_kind, subject_id, access)
    SELECT DISTINCT ON (v.id, s->>'kind', s->>'id') v.id, s->>'kind', s->>'id', s->>'access'
      FROM volumes v
      JOIN LATERAL (
        SELECT a.diff FROM audit_log a
         WHERE a.target_kind = 'volume' AND a.target_id = v.id
           AND a.action = 'storage.volume.share' AND a.outcome = 'success'
         ORDER BY a.seq DESC NULLS LAST, a.id DESC
         LIMIT 1
      ) last ON true
      CROSS JOIN LATERAL jsonb_array_elements(
        CASE WHEN jsonb_typeof(last.diff->'after'->'shares') = 'array' THEN last.diff->'after'->'shares'
             ELSE '[]'::jsonb END) s
     WHERE NOT EXISTS (SELECT 1 FROM volume_shares x WHERE x.volume_id = v.id)
       AND s->>'kind' IN ('user', 'project')
       AND coalesce(s->>'id', '') <> ''
       AND s->>'access' IN ('read_only', 'read_write')
     ORDER BY v.id, s->>'kind', s->>'id'
    ON CONFLICT DO NOTHING
  `);
}
