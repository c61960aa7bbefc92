// A batch of transitions reads its sessions by the primary key, however many sessions the table holds:
// Postgres guesses 100 rows for jsonb_to_recordset, and scanned the whole table twice per batch when the
// ids reached it only through it (4,000 rows read for 2 updated at 2,000 sessions).
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../db.test-support.ts";
import { type SessionTransition, updateSessionsFromTransitions } from "./recordTransitions.ts";

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  await t.db.raw(
    `INSERT INTO sessions (id, cr_name, namespace, owner_id, organization_id, offering, preset, image, gpu_model,
       gpu_count, hourly_credit_rate)
     SELECT 'ses_t' || g, 'ses-t' || g, 'org-acme', 'usr_1', 'org_acme', 'h100', 'gpu-small', 'jupyterlab', 'H100',
       1, '1' FROM generate_series(1, 2000) g`,
  );
  await t.db.raw("ANALYZE sessions");
});
afterAll(async () => t?.drop());

const running = (id: string): SessionTransition => ({
  id,
  phase: "Running",
  desired_state: "Running",
  priority: 0,
  node: "gpu-a-1",
  queue_position: null,
  reason: "PodRunning",
  message: null,
  queued_at: null,
  scheduled_at: null,
  started_at: new Date(),
  paused_at: null,
  terminated_at: null,
  gpu_model: null,
  gpu_cards: null,
  cluster_id: "clu_a",
  interim_status: null,
});

it("updates a batch's sessions by the primary key, without scanning the table", async () => {
  // pg_stat_xact_user_tables: what this transaction itself read, with nothing to wait for.
  const read = await t.db.transaction(async (trx) => {
    for (let i = 1; i <= 20; i++) {
      const ids = [`ses_t${i}`, `ses_t${i + 1000}`];
      const rows = await updateSessionsFromTransitions(trx, ids.map(running), new Date());
      expect(rows.map((r) => r.id).sort()).toEqual(ids.sort());
      expect(rows[0]?.placed_clusters).toEqual(["clu_a"]);
    }
    return (await trx.raw("SELECT seq_tup_read, idx_scan FROM pg_stat_xact_user_tables WHERE relname = 'sessions'"))
      .rows[0] as { seq_tup_read: string; idx_scan: string };
  });
  // A scan would read the 2,000 rows twice per batch.
  expect(Number(read.seq_tup_read)).toBe(0);
  expect(Number(read.idx_scan)).toBeGreaterThanOrEqual(20);
});
