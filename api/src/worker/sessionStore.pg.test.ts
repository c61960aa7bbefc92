// The worker's Postgres store where it batches: mirror revisions for a whole placement pass, and status
// transitions gathered into one transaction while another is being written.
import { type Session, SessionKind, statusBasis } from "@berth/crds";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../db/db.test-support.ts";
import { connect } from "../db/knex.ts";
import { insertTestSessions } from "../db/operations/sessions/sessions.test-support.ts";
import { nextMirrorRevision } from "../db/operations/sessions/updateSession.ts";
import { relayTo } from "../db/relay.test-support.ts";
import { isDatabaseUnreachable } from "../db/unreachable.ts";
import { updateSystemSettings } from "../domain/settings/settings.ts";
import { createWorkerStore } from "./sessionStore.ts";
import { TransitionLog } from "./transitionLog.ts";

let t: TestDatabase;
const log = pino({ level: "silent" });

beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t?.drop());

/** History rows of `count` new sessions; their ids. */
function someSessions(count: number): Promise<string[]> {
  return insertTestSessions(t.db, count, "w");
}

/** The Session resource of a history row, in a phase (placed on clu_a when the phase holds a GPU). */
function resource(id: string, phase: NonNullable<Session["status"]>["phase"], priority = 0): Session {
  const s = SessionKind.build(
    { name: id.replace("_", "-"), namespace: "org-acme", uid: `uid-${id}` },
    {
      owner: "usr_1",
      organization: "org_acme",
      offering: "h100",
      preset: "gpu-small",
      image: "jupyterlab",
    },
  );
  // Set after the schema's check: a test makes one the database refuses.
  s.spec.priority = priority;
  s.status = {
    phase,
    ...(phase === "Starting" || phase === "Running" ? { cluster: "clu_a", gpuModel: "NVIDIA-H100-80GB-HBM3" } : {}),
  };
  return s;
}
const pending = (id: string) => resource(id, "Pending");

describe("mirror revisions for a placement pass", () => {
  it("gives each session of a batch its own next revision, above what it had, in one statement", async () => {
    const ids = await someSessions(5);
    await t.db("sessions").where({ id: ids[4] }).update({ mirror_revision: 7 });
    const store = createWorkerStore(t.db, log);

    const first = await store.nextMirrorRevisions([...ids, "ses_unknown"]);
    expect(Object.fromEntries(first)).toEqual({
      [ids[0] as string]: 1,
      [ids[1] as string]: 1,
      [ids[2] as string]: 1,
      [ids[3] as string]: 1,
      [ids[4] as string]: 8,
    });
    const second = await store.nextMirrorRevisions(ids);
    for (const id of ids) expect(second.get(id)).toBe((first.get(id) as number) + 1);
    const rows = await t.db("sessions").whereIn("id", ids).select("id", "mirror_revision");
    expect(Object.fromEntries(rows.map((r) => [r.id, r.mirror_revision]))).toEqual(Object.fromEntries(second));
  });

  it("never hands out a revision twice when batches and single takes of the same sessions race", async () => {
    const ids = await someSessions(30);
    const store = createWorkerStore(t.db, log);
    const got = new Map<string, number[]>(ids.map((id) => [id, []]));
    const shuffled = () => [...ids].sort(() => Math.random() - 0.5);
    await Promise.all([
      ...Array.from({ length: 8 }, async () => {
        for (const [id, r] of await store.nextMirrorRevisions(shuffled())) got.get(id)?.push(r);
      }),
      ...ids.slice(0, 10).map(async (id) => got.get(id)?.push(await nextMirrorRevision(t.db, id))),
    ]);
    for (const [id, revisions] of got) {
      const expected = ids.indexOf(id) < 10 ? 9 : 8;
      expect(revisions).toHaveLength(expected);
      expect([...revisions].sort((a, b) => a - b)).toEqual(Array.from({ length: expected }, (_, i) => i + 1));
    }
  });
});

describe("transitions gathered into batches", () => {
  it("records transitions called together in one transaction, each session once, in the order of the calls", async () => {
    const ids = await someSessions(60);
    const transitions = new TransitionLog(t.db, log);
    await Promise.all(ids.map((id) => transitions.record(pending(id), resource(id, "Starting"))));

    expect(transitions.transactions).toBe(1);
    const rows = await t.db("sessions").whereIn("id", ids).select("id", "phase", "cluster_id", "placed_clusters");
    expect(rows).toHaveLength(60);
    for (const r of rows)
      expect(r).toMatchObject({ phase: "Starting", cluster_id: "clu_a", placed_clusters: ["clu_a"] });
    const events = await t.db("session_events").whereIn("session_id", ids).orderBy("seq");
    expect(events.map((e) => e.session_id)).toEqual(ids);
    expect(events.every((e) => e.type === "session.updated" && e.payload.previous_phase === "Pending")).toBe(true);
  });

  it("records a session's second transition of a burst after its first", async () => {
    const [a, b] = (await someSessions(2)) as [string, string];
    const transitions = new TransitionLog(t.db, log);
    await Promise.all([
      transitions.record(pending(a), resource(a, "Starting")),
      transitions.record(pending(b), resource(b, "Starting")),
      transitions.record(resource(a, "Starting"), resource(a, "Running")),
      transitions.record(resource(b, "Starting"), resource(b, "Running")),
    ]);
    const rows = await t.db("sessions").whereIn("id", [a, b]).select("phase", "placed_clusters");
    expect(rows).toEqual([
      { phase: "Running", placed_clusters: ["clu_a"] },
      { phase: "Running", placed_clusters: ["clu_a"] },
    ]);
    const events = await t.db("session_events").whereIn("session_id", [a, b]).orderBy("seq");
    expect(events.map((e) => [e.session_id, e.payload.previous_phase, e.payload.view.phase])).toEqual([
      [a, "Pending", "Starting"],
      [b, "Pending", "Starting"],
      [a, "Starting", "Running"],
      [b, "Starting", "Running"],
    ]);
  });

  it("keeps each session's transitions in order while several batches are written at once", async () => {
    const ids = await someSessions(30);
    const transitions = new TransitionLog(t.db, log, { writers: 4, maxBatch: 7 });
    const steps = ["Pending", "Starting", "Running", "Pausing"] as const;
    const calls: Promise<void>[] = [];
    for (let step = 1; step < steps.length; step++) {
      for (const id of ids) {
        calls.push(transitions.record(resource(id, steps[step - 1]), resource(id, steps[step])));
        // Spread over turns of the event loop, as the worker's writes come.
        if (Math.random() < 0.3) await new Promise((r) => setImmediate(r));
      }
    }
    await Promise.all(calls);

    expect(transitions.transactions).toBeGreaterThan(1);
    const events = await t.db("session_events").whereIn("session_id", ids).orderBy("seq");
    for (const id of ids)
      expect(events.filter((e) => e.session_id === id).map((e) => e.payload.view.phase)).toEqual([
        "Starting",
        "Running",
        "Pausing",
      ]);
    const rows = await t.db("sessions").whereIn("id", ids).select("phase");
    expect(rows.every((r) => r.phase === "Pausing")).toBe(true);
  });

  it("records every other transition of a batch once when one of them fails", async () => {
    const ids = await someSessions(20);
    const bad = ids[7] as string;
    const transitions = new TransitionLog(t.db, log);
    const results = await Promise.allSettled(
      ids.map((id) => transitions.record(pending(id), resource(id, "Starting", id === bad ? 1.5 : 0))),
    );

    expect(results.filter((r) => r.status === "rejected")).toHaveLength(1);
    expect(results[ids.indexOf(bad)]?.status).toBe("rejected");
    const rows = await t.db("sessions").whereIn("id", ids).select("id", "phase");
    for (const r of rows) expect(r.phase).toBe(r.id === bad ? "Pending" : "Starting");
    const events = await t.db("session_events").whereIn("session_id", ids).orderBy("seq");
    expect(events.map((e) => e.session_id)).toEqual(ids.filter((id) => id !== bad));
    // One batch, then each of the twenty alone.
    expect(transitions.transactions).toBe(21);
  });

  it("rejects every transition of a batch at once, without one by one, when the database cannot be reached", async () => {
    const [first, ...ids] = (await someSessions(11)) as [string, ...string[]];
    const relay = await relayTo(t.url);
    const db = connect(relay.url, { poolMax: 2 });
    try {
      const transitions = new TransitionLog(db, log);
      await transitions.record(pending(first), resource(first, "Starting"));
      await relay.cut();
      const results = await Promise.allSettled(
        ids.map((id) => transitions.record(pending(id), resource(id, "Starting"))),
      );

      expect(results.map((r) => r.status)).toEqual(ids.map(() => "rejected"));
      for (const r of results) expect(isDatabaseUnreachable((r as PromiseRejectedResult).reason)).toBe(true);
      // The first transition's, then the batch's: one by one, each would only fail the same way again.
      expect(transitions.transactions).toBe(2);
      const rows = await t.db("sessions").whereIn("id", ids).select("phase");
      expect(rows.every((r) => r.phase === "Pending")).toBe(true);
    } finally {
      await relay.cut(); // again: closed also when the test failed before it (a second cut is harmless)
      await db.destroy();
    }
  });
});

describe("the worker's LISTEN connection", () => {
  it("listens again after it is cut, however many tries it takes", async () => {
    const db = connect(t.url, { poolMax: 4 });
    const store = createWorkerStore(db, log);
    const got: string[] = [];
    let inventories = 0;
    const stop = await store.listen({ reports: (ids) => got.push(...ids), inventory: () => inventories++ });
    try {
      // The first try to connect again fails too (Postgres still away): a second one must follow.
      const client = db.client as { acquireConnection(): Promise<unknown> };
      const acquire = client.acquireConnection.bind(client);
      let failed = 0;
      client.acquireConnection = () => (failed++ === 0 ? Promise.reject(new Error("still away")) : acquire());
      await t.db.raw(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN berth_inventory%'",
      );
      await expect.poll(() => inventories, { timeout: 20_000, interval: 100 }).toBeGreaterThan(0);
      expect(failed).toBeGreaterThanOrEqual(2);
      await t.db.raw("SELECT pg_notify('berth_session_reports', 'ses_after')");
      await expect.poll(() => got, { timeout: 5_000, interval: 50 }).toContain("ses_after");
      // One LISTEN connection, not one per time the broken one said so.
      const listening = await t.db.raw(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN berth_inventory%'",
      );
      expect((listening.rows[0] as { n: number }).n).toBe(1);
    } finally {
      await stop();
      await db.destroy();
    }
  }, 40_000);
});

describe("the placement policy", () => {
  it("is binpack until an administrator chooses spread in the system settings, then spread at the next read", async () => {
    const store = createWorkerStore(t.db, log);
    expect(await store.placementPolicy?.()).toBe("binpack");
    await updateSystemSettings(
      { db: t.db, clock: { now: () => new Date() } },
      {
        userId: "usr_root",
        email: "root@example.test",
        isSuperAdmin: true,
        mustChangePassword: false,
        memberships: [],
      },
      { placement: { policy: "spread" } },
    );
    expect(await store.placementPolicy?.()).toBe("spread");
  });
});

describe("the owner's bell", () => {
  it("rings once when a session fails or the system pauses it, never for the owner's own pause", async () => {
    const [failed, starved, paused] = await someSessions(3);
    const transitions = new TransitionLog(t.db, log);
    const failing = resource(failed as string, "Failed");
    failing.status = {
      ...failing.status,
      conditions: [
        {
          type: "Ready",
          status: "False",
          reason: "PodFailed",
          message: "the pod exited with 137",
          lastTransitionTime: new Date().toISOString(),
        },
      ],
    };
    const withReason = (id: string, reason: string) => {
      const s = resource(id, "Paused");
      s.metadata.annotations = { "berth.dev/pause-reason": reason };
      return s;
    };
    await Promise.all([
      transitions.record(resource(failed as string, "Running"), failing),
      transitions.record(resource(starved as string, "Pausing"), withReason(starved as string, "InsufficientCredits")),
      transitions.record(resource(paused as string, "Pausing"), withReason(paused as string, "PausedByUser")),
    ]);
    // The same change seen twice (a replayed transition) is still one notification.
    await transitions.record(resource(failed as string, "Running"), failing);
    const notes = await t.db("notifications").where({ user_id: "usr_1" }).orderBy("id");
    expect(notes.map((n) => [n.kind, n.data.session_id, n.data.reason])).toEqual([
      ["session.failed", failed, "PodFailed"],
      ["session.paused", starved, "credits"],
    ]);
    expect(notes[0].body).toContain("the pod exited with 137");
    const pushed = await t.db("session_events").where({ type: "notification.created", owner_id: "usr_1" });
    expect(pushed).toHaveLength(2);
  });
});

describe("rows of creates cut off before their resource", () => {
  it("are found while Pending in the window, ended once as Failed, and the stream told", async () => {
    const [cut, recent] = await someSessions(2);
    const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000);
    await t
      .db("sessions")
      .where({ id: cut })
      .update({ created_at: minutesAgo(5) });
    const store = createWorkerStore(t.db, log);
    const found = await store.pendingRows(minutesAgo(60), minutesAgo(2));
    expect(found.map((r) => r.id)).toContain(cut);
    expect(found.map((r) => r.id)).not.toContain(recent);
    expect(found.find((r) => r.id === cut)).toMatchObject({
      namespace: "org-acme",
      name: (cut as string).replace("_", "-"),
    });

    expect(await store.failUnmadeCreate(cut as string, "cut off", new Date())).toBe(true);
    expect(await t.db("sessions").where({ id: cut }).first()).toMatchObject({
      phase: "Failed",
      reason: "CreateFailed",
    });
    const events = await t.db("session_events").where({ session_id: cut, type: "session.updated" });
    expect(events).toHaveLength(1);
    // Once: it is no longer Pending.
    expect(await store.failUnmadeCreate(cut as string, "cut off", new Date())).toBe(false);
    expect((await store.pendingRows(minutesAgo(60), minutesAgo(2))).map((r) => r.id)).not.toContain(cut);
  });
});

describe("interim statuses kept off the resource", () => {
  const interimOf = (s: Session) => ({ status: s.status ?? {}, basis: statusBasis(pending("x").status) });

  it("are held by the history row with the stream told, read back by a new leader, and cleared by the next status", async () => {
    const [id] = (await someSessions(1)) as [string];
    const store = createWorkerStore(t.db, log);
    await store.fence();
    const starting = resource(id, "Starting");
    const interim = interimOf(starting);
    await store.recordTransition(pending(id), starting, interim);
    expect(await t.db("sessions").where({ id }).first()).toMatchObject({
      phase: "Starting",
      cluster_id: "clu_a",
      interim_status: interim,
    });
    const events = await t.db("session_events").where({ session_id: id, type: "session.updated" });
    expect(events.map((e) => e.payload.view.phase)).toEqual(["Starting"]);

    const next = createWorkerStore(t.db, log);
    await next.fence();
    expect((await next.interimStatuses()).get(id)).toEqual(interim);

    // Running is written to the resource: the row no longer holds an interim status.
    await next.recordTransition(starting, resource(id, "Running"));
    expect(await t.db("sessions").where({ id }).first()).toMatchObject({ phase: "Running", interim_status: null });
    expect((await next.interimStatuses()).has(id)).toBe(false);
  });

  it("leave each row's phase for a new leader to read against its resource, a session without a row left out", async () => {
    const [a, b] = (await someSessions(2)) as [string, string];
    const store = createWorkerStore(t.db, log);
    await store.fence();
    const placed = resource(a, "Starting");
    await store.recordTransition(pending(a), placed, interimOf(placed));
    expect(await createWorkerStore(t.db, log).recordedPhases([a, b, "ses_norow00000000000000"])).toEqual(
      new Map([
        [a, "Starting"],
        [b, "Pending"],
      ]),
    );
  });

  it("of a leader fenced off by a newer one are refused, and its records of resource writes still land", async () => {
    const [a, b] = (await someSessions(2)) as [string, string];
    const stale = createWorkerStore(t.db, log);
    await stale.fence();
    const leader = createWorkerStore(t.db, log);
    await leader.fence();

    const placed = resource(a, "Starting");
    await expect(stale.recordTransition(pending(a), placed, interimOf(placed))).rejects.toThrow(/fenced off/);
    expect(await t.db("sessions").where({ id: a }).first()).toMatchObject({ phase: "Pending", interim_status: null });
    expect(await t.db("session_events").where({ session_id: a, type: "session.updated" })).toEqual([]);
    // A status the stale one wrote to the resource (guarded there by its resourceVersion) is still recorded.
    await stale.recordTransition(pending(b), resource(b, "Queued"));
    expect(await t.db("sessions").where({ id: b }).first()).toMatchObject({ phase: "Queued" });

    await leader.recordTransition(pending(a), placed, interimOf(placed));
    expect(await t.db("sessions").where({ id: a }).first()).toMatchObject({ phase: "Starting" });
  });

  it("hold a new leader's fence until a record under the old term is committed, so the new leader reads it", async () => {
    const [id] = (await someSessions(1)) as [string];
    const old = createWorkerStore(t.db, log);
    await old.fence();
    const placed = resource(id, "Starting");
    // The old leader's record holds the fence's row (FOR SHARE) until its transaction commits.
    const tx = await t.db.transaction();
    await tx("worker_fence").where({ id: 1 }).forShare().first();
    const next = createWorkerStore(t.db, log);
    let fenced = false;
    const fencing = next.fence().then(() => {
      fenced = true;
    });
    // The fence's update is seen waiting on the lock, not merely not done yet.
    await expect
      .poll(
        async () =>
          (
            (await t.db.raw(
              "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%worker_fence%'",
            )) as { rows: { n: number }[] }
          ).rows[0]?.n,
      )
      .toBe(1);
    expect(fenced).toBe(false);
    await tx.commit();
    await fencing;
    await expect(old.recordTransition(pending(id), placed, interimOf(placed))).rejects.toThrow(/fenced off/);
  });
});
