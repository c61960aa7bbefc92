import type { Knex } from "knex";

// Node pools granted to one person as well as to organizations and projects (docs/dev/node-pools.md).
// A grant names its grantee in one of three columns, exactly one set (CHECK), each a foreign key that
// drops the grant with what it names: a grant to a deleted account would name nobody yet read as granted
// in the console. grantee_kind and grantee_id stay, generated from them, so readers and a grant's
// uniqueness (pool, kind, id) keep their meaning. Earlier grants whose organization or project no longer
// exists named nobody and are dropped.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE node_pool_grants
      ADD COLUMN organization_id text REFERENCES organizations(id) ON DELETE CASCADE,
      ADD COLUMN project_id text REFERENCES projects(id) ON DELETE CASCADE,
      ADD COLUMN user_id text REFERENCES users(id) ON DELETE CASCADE;
    DELETE FROM node_pool_grants g
      WHERE (g.grantee_kind = 'organization' AND NOT EXISTS (SELECT 1 FROM organizations o WHERE o.id = g.grantee_id))
         OR (g.grantee_kind = 'project' AND NOT EXISTS (SELECT 1 FROM projects p WHERE p.id = g.grantee_id));
    UPDATE node_pool_grants SET organization_id = grantee_id WHERE grantee_kind = 'organization';
    UPDATE node_pool_grants SET project_id = grantee_id WHERE grantee_kind = 'project';
    ALTER TABLE node_pool_grants DROP COLUMN grantee_kind, DROP COLUMN grantee_id;
    ALTER TABLE node_pool_grants
      ADD CONSTRAINT node_pool_grants_one_grantee CHECK (num_nonnulls(organization_id, project_id, user_id) = 1),
      ADD COLUMN grantee_kind text GENERATED ALWAYS AS (
        CASE WHEN organization_id IS NOT NULL THEN 'organization'
             WHEN project_id IS NOT NULL THEN 'project'
             ELSE 'user' END) STORED,
      ADD COLUMN grantee_id text GENERATED ALWAYS AS (COALESCE(organization_id, project_id, user_id)) STORED,
      ADD CONSTRAINT node_pool_grants_grantee UNIQUE (pool_id, grantee_kind, grantee_id);
    CREATE INDEX node_pool_grants_user ON node_pool_grants (user_id) WHERE user_id IS NOT NULL;
  `);
}
