// Status reports of one cluster written at once (an operator's heartbeat and a report on a change, or two
// replicas around a lease hand-over) against real Postgres: each upsert locks the rows it updates, so two
// that lock the same sessions in opposite orders would deadlock.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../db/db.test-support.ts";
import { insertCluster } from "../db/operations/clusters/insertCluster.ts";
import { insertTestSessions } from "../db/operations/sessions/sessions.test-support.ts";
import type { Deps } from "../deps.ts";
import { recordSessionStatus } from "./reportStatus.ts";

let t: TestDatabase;
let deps: Pick<Deps, "db" | "clock">;

beforeAll(async () => {
  t = await createTestDatabase();
  deps = { db: t.db, clock: { now: () => new Date() } };
  await insertCluster(t.db, {
    id: "clu_a",
    name: "clu_a",
    session_domain: "clu_a.example",
    registered_by: null,
    registered_at: new Date(),
  });
});
afterAll(async () => t?.drop());

/** `count` sessions placed on clu_a, with a first report each; their ids in sorted order. */
async function sessionsOnClusterA(count: number): Promise<string[]> {
  const ids = await insertTestSessions(t.db, count, "r");
  await t.db("sessions").whereIn("id", ids).update({ cluster_id: "clu_a" });
  await recordSessionStatus(deps, "clu_a", reports(ids, "Starting", 1));
  return ids.sort();
}

const reports = (sessions: string[], phase: string, second: number) =>
  sessions.map((session) => ({ session, phase, at: new Date(Date.UTC(2026, 0, 1, 0, 0, second)) }));

/** Waits until `count` backends of the test database wait for a lock. */
async function lockWaiters(count: number): Promise<void> {
  await expect
    .poll(async () => {
      const r = await t.db.raw(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      );
      return (r.rows[0] as { n: number }).n;
    })
    .toBe(count);
}

describe("status reports of one cluster written at once", () => {
  it("do not deadlock when they name the same sessions in opposite orders", async () => {
    const [first, middle, last] = (await sessionsOnClusterA(3)) as [string, string, string];
    // A third writer holds the middle row, so that each report has taken its first row before either
    // goes on: unsorted, one holds `first` and the other `last` when the middle is let go.
    const blocker = await t.db.transaction();
    const writes: Promise<unknown>[] = [];
    try {
      await blocker("session_status_reports").where({ cluster_id: "clu_a", session: middle }).forUpdate();
      const forward = recordSessionStatus(deps, "clu_a", reports([first, middle, last], "Running", 2));
      writes.push(forward);
      await lockWaiters(1);
      const backward = recordSessionStatus(deps, "clu_a", reports([last, middle, first], "Pausing", 3));
      writes.push(backward);
      await lockWaiters(2);
      await blocker.commit();

      expect(await Promise.all([forward, backward])).toEqual([{ accepted: 3 }, { accepted: 3 }]);
    } finally {
      if (!blocker.isCompleted()) await blocker.rollback();
      // On a failure above, the reports are still running: let them end before the database is dropped.
      await Promise.allSettled(writes);
    }
    const rows = await t.db("session_status_reports").where({ cluster_id: "clu_a" }).select("session", "phase");
    expect(rows.map((r) => r.phase)).toEqual(["Pausing", "Pausing", "Pausing"]);
  });
});

describe("status reports for sessions of other clusters", () => {
  it("are kept for a session that was placed here before, in any phase, and refused for one never here", async () => {
    const [moved, never] = await insertTestSessions(t.db, 2, "own");
    // moved: on clu_a, then placed on clu_b; its pod on clu_a outlived the move and still runs.
    await t
      .db("sessions")
      .where({ id: moved })
      .update({ cluster_id: "clu_b", placed_clusters: ["clu_a", "clu_b"] });
    await t
      .db("sessions")
      .where({ id: never })
      .update({ cluster_id: "clu_b", placed_clusters: ["clu_b"] });
    for (const [phase, second] of [
      ["Running", 5],
      ["Pausing", 6],
      ["Terminated", 7],
    ] as const)
      expect(await recordSessionStatus(deps, "clu_a", reports([moved as string], phase, second))).toEqual({
        accepted: 1,
      });
    await expect(
      recordSessionStatus(deps, "clu_a", reports([moved as string, never as string], "Running", 8)),
    ).rejects.toMatchObject({ code: "forbidden", details: { sessions: [never] } });
  });
});
