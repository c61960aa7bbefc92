// Cluster health on real Postgres: a registered cluster that stops reporting is marked unreachable (once),
// every super_admin is told (critical, one while unread), and it is reachable again at its next report;
// deregistered clusters and clusters that report are left alone.
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../db/db.test-support.ts";
import { ClusterHealthLoop } from "./clusterHealthLoop.ts";

describe("the cluster health loop", () => {
  let database: TestDatabase;
  let now = new Date("2026-11-26T10:00:00Z");
  const min = 60_000;
  const db = () => database.db;
  const loop = () =>
    new ClusterHealthLoop({
      db: db(),
      log: pino({ level: "silent" }),
      clock: { now: () => now },
      unreachableAfterMs: 2 * min,
    });

  beforeAll(async () => {
    database = await createTestDatabase();
    await db()("users").insert([
      { id: "usr_root", email: "root@berth.test", password_hash: "x", is_super_admin: true },
      { id: "usr_gone", email: "gone@berth.test", password_hash: "x", is_super_admin: true, disabled: true },
      { id: "usr_member", email: "member@berth.test", password_hash: "x" },
    ]);
    const at = (m: number) => new Date(now.getTime() - m * min);
    await db()("clusters").insert([
      { id: "clu_silent", name: "silent", session_domain: "s.test", registered_at: at(60), last_report_at: at(5) },
      { id: "clu_fine", name: "fine", session_domain: "f.test", registered_at: at(60), last_report_at: at(0.5) },
      { id: "clu_new", name: "new", session_domain: "n.test", registered_at: at(1), last_report_at: null },
      {
        id: "clu_gone",
        name: "gone",
        session_domain: "g.test",
        registered_at: at(60),
        last_report_at: at(50),
        deregistered_at: at(40),
      },
    ]);
  });
  afterAll(async () => {
    await database.drop();
  });

  it("marks a silent cluster unreachable once and tells every active super_admin", async () => {
    expect(await loop().pass()).toEqual({ unreachable: ["clu_silent"], reachable: [] });
    expect(await loop().pass()).toEqual({ unreachable: [], reachable: [] });
    const bell = await db()("notifications").where({ kind: "cluster.unreachable" });
    expect(bell.map((n) => n.user_id)).toEqual(["usr_root"]);
    expect(bell[0]).toMatchObject({ severity: "critical", title: "Cluster silent is unreachable" });
    expect(bell[0].data).toMatchObject({ cluster_id: "clu_silent" });
  });

  it("counts a cluster that never reported from its registration, and brings a cluster back at its report", async () => {
    now = new Date(now.getTime() + 2 * min);
    expect((await loop().pass()).unreachable).toEqual(["clu_fine", "clu_new"]); // fine is silent 2.5 min by now
    await db()("clusters").where({ id: "clu_silent" }).update({ last_report_at: now });
    expect(await loop().pass()).toEqual({ unreachable: [], reachable: ["clu_silent"] });
    const rows = await db()("clusters").orderBy("id").select("id", "unreachable_since");
    expect(Object.fromEntries(rows.map((r) => [r.id, r.unreachable_since !== null]))).toEqual({
      clu_fine: true,
      clu_gone: false,
      clu_new: true,
      clu_silent: false,
    });
  });
});
