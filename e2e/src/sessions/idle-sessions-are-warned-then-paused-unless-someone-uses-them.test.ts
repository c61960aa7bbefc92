// biome-ignore-all lint/suspicious/noExplicitAny: journeys read the API's JSON as it comes
// Idle auto-pause and time limits on the bed, with the reclaim loop's clock in the test's hand: the
// activity reports arrive over the internal plane exactly as the cluster's gateway and operator send them
// (their own tests show how typing, frames and kernels become these reports), a pass runs every minute,
// and every effect is read back through the API, the management cluster and the GPU cluster.
import { readFileSync } from "node:fs";
import { reclaimWorkerLoop } from "@berth/api";
import type { BodyOf } from "@berth/console/client";
import { HttpKube } from "@berth/controllers/kube";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bedApi, refusalOf } from "../api-client.ts";
import { type GpuClusterHandle, type SessionsBed, startSessionsBed } from "./harness.ts";

vi.setConfig({ testTimeout: 600_000 });

let bed: SessionsBed;
beforeAll(async () => {
  bed = await startSessionsBed({ workerReclaim: false });
});
afterAll(async () => {
  await bed?.stop();
});

const h100 = { offering: "h100", preset: "gpu-small", image: "jupyterlab" };
const MIN = 60_000;
/** The API as `who` calls it (a bare string is a token, a bad one included). */
const api = (who: { token: string } | string) => bedApi(bed, typeof who === "string" ? { token: who } : who);

async function report(h: GpuClusterHandle, body: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${bed.plane.url}/internal/v1/sessions/activity`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${readFileSync(h.tokenFile, "utf8").trim()}`,
      "content-type": "application/json",
    },
    body: JSON.stringify({ cluster_id: h.id, ...body }),
  });
  if (res.status !== 200) throw new Error(`activity report: ${res.status} ${await res.text()}`);
}

describe("idle auto-pause and time limits", () => {
  it("refuses idle timeouts and running times outside the policy, with a stable code and the bounds", async () => {
    const low = await refusalOf(api(bed.alice).call("createSession", { body: { ...h100, idle_timeout_minutes: 5 } }));
    expect(low.status).toBe(400);
    expect(low).toMatchObject({
      code: "idle_timeout_out_of_bounds",
      details: { min: 20, max: 480, value: 5 },
    });
    const long = await refusalOf(
      api(bed.alice).call("createSession", { body: { ...h100, max_runtime_minutes: 24 * 60 + 1 } }),
    );
    expect(long.status).toBe(400);
    expect(long).toMatchObject({ code: "max_runtime_out_of_bounds", details: { max: 1440 } });
    // A word where the contract wants a number, on purpose: the API's own check answers it.
    const soon = { ...h100, idle_timeout_minutes: "soon" } as unknown as BodyOf<"createSession">;
    const bad = await refusalOf(api(bed.alice).call("createSession", { body: soon }));
    expect(bad.status).toBe(400);
    expect(bad.code).toBe("validation_failed");
    expect((await bed.t.database.db("sessions").where({ owner_id: bed.alice.id })).length).toBe(0);
  });

  it("warns twice, pauses at the deadline's tick, and is held off by use, keep-running and unknown signals", async () => {
    const gpuA = bed.gpu["gpu-a"] as GpuClusterHandle;
    const idle = (await api(bed.alice).call("createSession", { body: { ...h100, idle_timeout_minutes: 60 } })).id;
    const timed = (await api(bed.alice).call("createSession", { body: { ...h100, max_runtime_minutes: 90 } })).id;
    const s1 = await bed.waitFor(bed.alice, idle, (s) => s.phase === "Running", "idle session Running");
    const s2 = await bed.waitFor(bed.alice, timed, (s) => s.phase === "Running", "timed session Running");
    const t0 = Date.parse(s1.started_at);
    const t2 = Date.parse(s2.started_at);
    let now = t0;
    const loop = reclaimWorkerLoop({
      db: bed.workerDb,
      kube: new HttpKube(bed.workerKubeConfig, { userAgent: "berth-worker" }),
      log: bed.t.deps.log,
      clock: { now: () => new Date(now) },
    });

    let gatewaySilent = false;
    const userAt = new Map<string, number>();
    const log: string[] = [];
    const tickAt = async (min: number) => {
      now = t0 + min * MIN;
      const at = new Date(now).toISOString();
      if (!gatewaySilent)
        await report(gpuA, {
          source: "gateway",
          observed_at: at,
          sessions: [...userAt].map(([session, t]) => ({ session, user_active_at: new Date(t).toISOString() })),
        });
      userAt.clear();
      await report(gpuA, {
        source: "operator",
        observed_at: at,
        sessions: [
          { session: idle, gpu_utilization: 1, notebook: { state: "ok", busy: false, last_activity: null } },
          // The timed session computes all along: the time limit pauses it anyway.
          { session: timed, gpu_utilization: 87, notebook: { state: "ok", busy: true, last_activity: at } },
        ],
      });
      const r = await loop.pass();
      for (const w of r.warned)
        log.push(`${min} ${w.session === idle ? "idle" : "timed"} ${w.kind}-${w.minutesBefore}`);
      for (const p of r.paused) log.push(`${min} ${p.session === idle ? "idle" : "timed"} paused ${p.reason}`);
    };

    for (let m = 1; m <= 49; m++) await tickAt(m);
    expect(log).toEqual([expect.stringMatching(/^3[01] timed runtime-60$/), "45 idle idle-15"]);
    // The warning is on the session, with its countdown.
    const warned = await api(bed.alice).call("getSession", { params: { sessionId: idle } });
    expect(warned.idle_warning).toEqual({
      since: new Date(t0).toISOString(),
      deadline: new Date(t0 + 60 * MIN).toISOString(),
    });
    expect((await api(bed.alice).call("getSession", { params: { sessionId: timed } })).runtime_warning).toEqual({
      deadline: new Date(t2 + 90 * MIN).toISOString(),
    });

    // Typing through the gateway at minute 50: the warning is withdrawn and the stretch starts again.
    userAt.set(idle, t0 + 50 * MIN);
    await tickAt(50);
    expect((await api(bed.alice).call("getSession", { params: { sessionId: idle } })).idle_warning).toBeNull();
    for (let m = 51; m <= 99; m++) await tickAt(m);
    expect(log.filter((l) => l.includes(" idle "))).toEqual(["45 idle idle-15", "95 idle idle-15"]);
    // The timed session is paused at its limit although busy: warned at T−60, T−15, T−5.
    expect(log.filter((l) => l.includes(" timed "))).toEqual([
      expect.stringMatching(/^3[01] timed runtime-60$/),
      expect.stringMatching(/^7[56] timed runtime-15$/),
      expect.stringMatching(/^8[56] timed runtime-5$/),
      expect.stringMatching(/^9[01] timed paused MaxRuntime$/),
    ]);
    const stopped = await bed.waitFor(bed.alice, timed, (s) => s.phase === "Paused", "timed session Paused");
    expect(stopped.reason).toBe("MaxRuntime");
    expect((await bed.pods("gpu-a")).map((p) => p.name)).not.toContain(stopped.resource_name);

    // Keep running: only the owner, at most three times in a run period.
    const keepRunning = (who: { token: string } | string) =>
      api(who).call("keepSessionRunning", { params: { sessionId: idle } });
    expect((await refusalOf(keepRunning(bed.bob))).status).toBe(404);
    const admin = await refusalOf(keepRunning(bed.orgAdmin));
    expect(admin.status).toBe(403);
    expect(admin).toMatchObject({ code: "forbidden", details: { reason: "not_owner" } });
    expect((await refusalOf(keepRunning("not-a-token"))).status).toBe(401);
    now = t0 + 100 * MIN;
    bed.t.deps.clock = { now: () => new Date(now) };
    // Answered means 200, the route's one success status in the contract.
    const kept = await keepRunning(bed.alice);
    expect(kept.idle_warning).toBeNull();
    for (const m of [101, 102]) {
      now = t0 + m * MIN;
      await keepRunning(bed.alice);
    }
    const fourth = await refusalOf(keepRunning(bed.alice));
    expect(fourth.status).toBe(409);
    expect(fourth).toMatchObject({ code: "keep_running_limit_reached", details: { used: 3, max: 3 } });
    bed.t.deps.clock = { now: () => new Date() };

    // The operator restarts: the clock is in the Session's status and Postgres, not in a process.
    for (let m = 100; m <= 130; m++) await tickAt(m);
    await gpuA.operator?.stop();
    await gpuA.startOperator();
    for (let m = 131; m <= 139; m++) await tickAt(m);
    // The gateway goes silent from minute 140: the traffic signal is unknown, nothing is sent or paused.
    gatewaySilent = true;
    for (let m = 140; m <= 169; m++) await tickAt(m);
    expect(log.filter((l) => l.includes(" idle ") && Number(l.split(" ")[0]) > 100)).toEqual([]);
    expect((await api(bed.alice).call("getSession", { params: { sessionId: idle } })).phase).toBe("Running");
    // The API says which signal is missing (the console shows it), at the loop's clock.
    bed.t.deps.clock = { now: () => new Date(now) };
    const idleOf = (who: { token: string } | string, sessionId = idle) =>
      api(who).call("getSessionIdle", { params: { sessionId } });
    const state = await idleOf(bed.alice);
    expect(state).toMatchObject({
      state: "suspended",
      missing: ["traffic"],
      idle_timeout_minutes: 60,
      signals: {
        traffic: { state: "unknown", why: "the session gateway has not reported" },
        gpu: { state: "known", why: null },
        notebook: { state: "known" },
      },
      keep_running: { used: 3, max: 3 },
    });
    // Whoever sees the session reads it; others, a bad token or a malformed id are refused.
    expect((await idleOf(bed.orgAdmin)).missing).toEqual(["traffic"]);
    expect((await refusalOf(idleOf(bed.bob))).code).toBe("not_found");
    expect((await refusalOf(idleOf("not-a-token"))).status).toBe(401);
    const malformed = await refusalOf(idleOf(bed.alice, "ses_NOPE"));
    expect(malformed.status).toBe(400);
    expect(malformed.code).toBe("validation_failed");
    bed.t.deps.clock = { now: () => new Date() };
    // It reports again at 170, past the deadline (102 + 60): the warning it owes goes out first, and the
    // pause comes five minutes after it, at the tick it is due and not before.
    gatewaySilent = false;
    for (let m = 170; m <= 180; m++) await tickAt(m);
    expect(log.filter((l) => l.includes(" idle ") && Number(l.split(" ")[0]) > 100)).toEqual([
      "170 idle idle-5",
      "175 idle paused Idle",
    ]);
    const paused = await bed.waitFor(bed.alice, idle, (s) => s.phase === "Paused", "idle session Paused");
    expect(paused.reason).toBe("Idle");
    expect((await bed.pods("gpu-a")).map((p) => p.name)).not.toContain(paused.resource_name);

    // The owner heard of each step: notifications and events on the stream.
    const notes = await bed.t.database.db("notifications").where({ user_id: bed.alice.id }).orderBy("id");
    expect(notes.map((n: any) => n.kind)).toEqual(
      expect.arrayContaining(["session.idle_warning", "session.runtime_warning", "session.paused"]),
    );
    expect(
      notes
        .filter((n: any) => n.kind === "session.paused")
        .map((n: any) => n.data.reason)
        .sort(),
    ).toEqual(["idle", "time_limit"]);
    const events = await bed.t.database.db("session_events").where({ session_id: idle }).select("type");
    expect(events.filter((e: any) => e.type === "session.idle_warning").length).toBe(3);

    // A resumed session starts a fresh period: no time-limit warning, no pause at the next pass.
    await api(bed.alice).call("resumeSession", { params: { sessionId: timed } });
    const back = await bed.waitFor(bed.alice, timed, (s) => s.phase === "Running", "timed session Running again");
    now = Date.parse(back.started_at) + MIN;
    await report(gpuA, { source: "gateway", observed_at: new Date(now).toISOString(), sessions: [] });
    const r = await loop.pass();
    expect(r.paused).toEqual([]);
    bed.t.deps.clock = { now: () => new Date(now) };
    expect(await api(bed.alice).call("getSessionIdle", { params: { sessionId: idle } })).toMatchObject({
      state: "not_running",
      missing: [],
    });
    bed.t.deps.clock = { now: () => new Date() };
    expect((await api(bed.alice).call("getSession", { params: { sessionId: timed } })).runtime_warning).toBeNull();
  });
});
