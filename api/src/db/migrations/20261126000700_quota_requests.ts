import type { Knex } from "knex";

// Quota-increase requests (docs/dev/quota-requests.md): a member asks for higher resource-policy limits
// for themselves in an organization (scope `user`) or for a project (scope `project`); an administrator
// grants all, part or nothing. `asked`, `current` and `granted` map limit names (the REST API's
// snake_case, e.g. max_gpus_per_user) to numbers. `policy_name` is the ResourcePolicy the approval wrote.
// Each request asked and decided is also a webhook event of its organization (the outbox of
// 20261126000200_webhooks.ts).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable("quota_requests", (t) => {
    t.text("id").primary(); // qrq_<20>
    t.text("organization_id").notNullable();
    t.text("project_id"); // set for scope project; for scope user, the project the member asked from
    t.text("scope").notNullable(); // user | project
    t.text("requester_id").notNullable();
    t.jsonb("asked").notNullable();
    t.jsonb("current").notNullable();
    t.text("reason").notNullable();
    t.text("status").notNullable().defaultTo("pending");
    t.jsonb("granted");
    t.text("policy_name");
    t.text("decided_by");
    t.text("decision_note");
    t.timestamp("created_at", { useTz: true }).notNullable();
    t.timestamp("decided_at", { useTz: true });
    t.index(["requester_id", "created_at"]);
    t.index(["organization_id", "status", "created_at"]);
    t.index(["project_id", "status", "created_at"]);
  });
  await knex.raw(`
    ALTER TABLE quota_requests
      ADD CONSTRAINT quota_requests_status
        CHECK (status IN ('pending', 'approved', 'partially_approved', 'denied', 'cancelled')),
      ADD CONSTRAINT quota_requests_scope CHECK (scope IN ('user', 'project')),
      ADD CONSTRAINT quota_requests_project CHECK (scope <> 'project' OR project_id IS NOT NULL),
      ADD CONSTRAINT quota_requests_decided CHECK ((status = 'pending') = (decided_at IS NULL));

    -- One pending request per person and target: a second one waits for the first's decision.
    CREATE UNIQUE INDEX quota_requests_one_pending
      ON quota_requests (requester_id, organization_id, scope, (CASE WHEN scope = 'project' THEN project_id ELSE '' END))
      WHERE status = 'pending';

    CREATE FUNCTION berth_webhook_from_quota_request() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE kind text;
    BEGIN
      IF TG_OP = 'INSERT' THEN
        kind := 'quota.request.created';
      ELSIF OLD.status = 'pending' AND NEW.status IN ('approved', 'partially_approved', 'denied') THEN
        kind := 'quota.request.decided';
      ELSE
        RETURN NULL;
      END IF;
      PERFORM berth_webhook_enqueue(NEW.organization_id, kind, 'quota_request:' || NEW.id,
        jsonb_build_object(
          'request_id', NEW.id, 'organization_id', NEW.organization_id, 'project_id', NEW.project_id,
          'scope', NEW.scope, 'requester_id', NEW.requester_id, 'asked', NEW.asked, 'status', NEW.status,
          'granted', NEW.granted, 'policy', NEW.policy_name, 'decided_by', NEW.decided_by),
        coalesce(NEW.decided_at, NEW.created_at, now()), 'quota_requests:' || NEW.id || ':' || NEW.status);
      RETURN NULL;
    END $$;
    CREATE TRIGGER quota_requests_webhooks AFTER INSERT OR UPDATE OF status ON quota_requests
      FOR EACH ROW EXECUTE FUNCTION berth_webhook_from_quota_request();
  `);
}
