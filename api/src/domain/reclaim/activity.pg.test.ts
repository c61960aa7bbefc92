// Activity reports against real Postgres, and the signals the reclaim loop reads from them: clocks only
// move forward, a report naming a session never on the cluster writes nothing, a silent source or a
// notebook server that stopped answering makes its signal unknown, and the GPU reading is judged against
// the session's own policy.
import type { ResourcePolicy } from "@berth/crds";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../db/db.test-support.ts";
import { activityOf, sourcesSeen } from "../../db/operations/reclaim/readActivity.ts";
import { insertTestSessions } from "../../db/operations/sessions/sessions.test-support.ts";
import type { SessionsRuntime } from "../sessions/runtime.ts";
import { recordActivity } from "./activity.ts";
import { signalsOf } from "./signals.ts";

let t: TestDatabase;
const policies: ResourcePolicy[] = [];
const sessions = { catalog: { policies: async () => policies } } as unknown as SessionsRuntime;
const at = (min: number) => new Date(Date.UTC(2026, 10, 26, 10, min)).toISOString();
let deps: Parameters<typeof recordActivity>[0];

beforeAll(async () => {
  t = await createTestDatabase();
  deps = { db: t.db, clock: { now: () => new Date() }, sessions };
});
afterAll(async () => t?.drop());

async function onCluster(cluster: string, n: number, prefix: string): Promise<string[]> {
  const ids = await insertTestSessions(t.db, n, prefix);
  await t.db("sessions").whereIn("id", ids).update({ cluster_id: cluster });
  return ids;
}

describe("activity reports", () => {
  it("move each clock forward only, whatever order reports arrive in", async () => {
    const [s] = (await onCluster("clu_a", 1, "fwd")) as [string];
    await recordActivity(deps, "clu_a", {
      cluster_id: "clu_a",
      source: "gateway",
      observed_at: at(10),
      sessions: [{ session: s, user_active_at: at(9) }],
    });
    await recordActivity(deps, "clu_a", {
      cluster_id: "clu_a",
      source: "gateway",
      observed_at: at(5),
      sessions: [{ session: s, user_active_at: at(4) }],
    });
    const row = (await activityOf(t.db, [s])).get(s);
    expect(row?.user_active_at?.toISOString()).toBe(at(9));
    expect((await sourcesSeen(t.db)).get("clu_a/gateway")?.toISOString()).toBe(at(10));
  });

  it("refuse a report naming a session never placed on the cluster, and write none of it", async () => {
    const [mine] = (await onCluster("clu_a", 1, "mine")) as [string];
    const [theirs] = (await onCluster("clu_b", 1, "theirs")) as [string];
    const refused = await recordActivity(deps, "clu_a", {
      cluster_id: "clu_a",
      source: "operator",
      observed_at: at(20),
      sessions: [
        { session: mine, gpu_utilization: 50, notebook: { state: "ok", busy: false, last_activity: null } },
        { session: theirs, gpu_utilization: 50, notebook: { state: "ok", busy: false, last_activity: null } },
      ],
    }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "forbidden", details: { sessions: [theirs] } });
    expect((await activityOf(t.db, [mine, theirs])).size).toBe(0);
  });

  it("judge GPU readings against the session's policy threshold and keep a busy kernel's time", async () => {
    const [s] = (await onCluster("clu_a", 1, "gpu")) as [string];
    const org = (await t.db("sessions").where({ id: s }).first("organization_id")).organization_id as string;
    policies.splice(0, policies.length, {
      apiVersion: "berth.dev/v1alpha1",
      kind: "ResourcePolicy",
      metadata: { name: "org" },
      spec: { scope: { kind: "organization", id: org }, limits: {}, idle: { gpuUtilizationPercent: 20 } },
    } as ResourcePolicy);
    const report = (minute: number, util: number, busy: boolean) =>
      recordActivity(deps, "clu_a", {
        cluster_id: "clu_a",
        source: "operator",
        observed_at: at(minute),
        sessions: [{ session: s, gpu_utilization: util, notebook: { state: "ok", busy, last_activity: at(1) } }],
      });
    await report(30, 25, false); // over 20 %: active
    await report(31, 15, true); // under this policy's 20 % (over the default 5 %), but a kernel is busy
    await report(32, 15, false);
    const row = (await activityOf(t.db, [s])).get(s);
    expect(row?.gpu_active_at?.toISOString()).toBe(at(30));
    expect(row?.gpu_seen_at?.toISOString()).toBe(at(32));
    expect(row?.notebook_active_at?.toISOString()).toBe(at(31));
  });
});

describe("the signals the loop reads", () => {
  it("are known while each source reported within 3 minutes, unknown otherwise, and 'none' without a notebook server", async () => {
    const [s] = (await onCluster("clu_c", 1, "sig")) as [string];
    await recordActivity(deps, "clu_c", { cluster_id: "clu_c", source: "gateway", observed_at: at(40), sessions: [] });
    await recordActivity(deps, "clu_c", {
      cluster_id: "clu_c",
      source: "operator",
      observed_at: at(40),
      sessions: [{ session: s, gpu_utilization: 0, notebook: { state: "ok", busy: false, last_activity: null } }],
    });
    const read = async (minute: number) =>
      signalsOf({
        row: (await activityOf(t.db, [s])).get(s),
        clusterId: "clu_c",
        sources: await sourcesSeen(t.db),
        now: new Date(at(minute)),
        periodStart: new Date(at(0)),
      });
    expect(await read(42)).toEqual({
      gpu: { state: "known", lastActiveAt: null },
      traffic: { state: "known", lastActiveAt: null },
      notebook: { state: "known", lastActiveAt: null },
    });
    // The notebook server stops answering: the last good state stands until it is 3 minutes old.
    await recordActivity(deps, "clu_c", {
      cluster_id: "clu_c",
      source: "operator",
      observed_at: at(44),
      sessions: [
        { session: s, gpu_utilization: null, notebook: { state: "unreachable", busy: false, last_activity: null } },
      ],
    });
    const later = await read(44);
    expect(later.notebook.state).toBe("unknown");
    expect(later.gpu.state).toBe("unknown");
    expect(later.traffic.state).toBe("unknown");
    // A terminal session: no notebook server, which is not unknown.
    await recordActivity(deps, "clu_c", { cluster_id: "clu_c", source: "gateway", observed_at: at(45), sessions: [] });
    await recordActivity(deps, "clu_c", {
      cluster_id: "clu_c",
      source: "operator",
      observed_at: at(45),
      sessions: [{ session: s, gpu_utilization: 0, notebook: { state: "none", busy: false, last_activity: null } }],
    });
    expect((await read(46)).notebook).toEqual({ state: "none" });
  });
});
