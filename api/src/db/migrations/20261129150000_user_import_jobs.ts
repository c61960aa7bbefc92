import type { Knex } from "knex";

// Bulk user import as a background job (docs/dev/identity.md, "Bulk import").
// - user_imports gains the job's state: the file (kept until the job ends, so a worker that takes over an
//   interrupted job can resume), its claim (claimed_by/claimed_until, as private_images' imports), and the
//   state of its temporary passwords (held until the importer fetches them once, or the retention ends them).
// - user_import_rows: one row per row of the file, written in the same transaction as what the row did, so a
//   committed row always has its record and a resumed job skips exactly the rows that were done. An account
//   created holds its temporary password here, sealed (domain/webhooks/secretBox.ts), until it is fetched.
// - Earlier runs' results (the jsonb column) move into user_import_rows.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE user_imports
      ADD COLUMN state text NOT NULL DEFAULT 'succeeded'
        CHECK (state IN ('queued', 'running', 'succeeded', 'failed')),
      ADD COLUMN csv text,
      ADD COLUMN rows_total integer NOT NULL DEFAULT 0,
      ADD COLUMN request_id text,
      ADD COLUMN claimed_by text,
      ADD COLUMN claimed_until timestamptz,
      ADD COLUMN attempts integer NOT NULL DEFAULT 0,
      ADD COLUMN failure jsonb,
      ADD COLUMN started_at timestamptz,
      ADD COLUMN finished_at timestamptz,
      ADD COLUMN passwords text NOT NULL DEFAULT 'none'
        CHECK (passwords IN ('none', 'held', 'fetched', 'expired')),
      ADD COLUMN passwords_ended_at timestamptz;
    CREATE INDEX user_imports_pending ON user_imports (created_at) WHERE state IN ('queued', 'running');
    CREATE INDEX user_imports_passwords_held ON user_imports (finished_at) WHERE passwords = 'held';

    CREATE TABLE user_import_rows (
      import_id text NOT NULL REFERENCES user_imports(id) ON DELETE CASCADE,
      idx integer NOT NULL,
      outcome text NOT NULL CHECK (outcome IN ('create', 'update', 'unchanged', 'error')),
      result jsonb NOT NULL,
      sealed_password text,
      PRIMARY KEY (import_id, idx)
    );

    INSERT INTO user_import_rows (import_id, idx, outcome, result)
      SELECT i.id, (e.n - 1)::integer, e.r->>'outcome', e.r
        FROM user_imports i, jsonb_array_elements(i.results) WITH ORDINALITY AS e(r, n);
    UPDATE user_imports SET rows_total = jsonb_array_length(results), finished_at = created_at, started_at = created_at;
    ALTER TABLE user_imports DROP COLUMN results;
    ALTER TABLE user_imports ALTER COLUMN state SET DEFAULT 'queued';
  `);
}
