// Pausing returns the GPU: the pod is gone, and a session waiting in the queue for that model takes the
// GPU. Resuming asks for one again (and waits its turn when there is none). Every step reaches the
// user's event stream, in order.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bedApi, refusalOf } from "../api-client.ts";
import { openEventStream, type SessionsBed, startSessionsBed } from "./harness.ts";

// Journeys wait on real clusters; a loaded machine (other beds running) stretches them.
vi.setConfig({ testTimeout: 180_000 });

let bed: SessionsBed;
beforeAll(async () => {
  bed = await startSessionsBed();
});
afterAll(async () => {
  await bed?.stop();
});

const h100 = { offering: "h100", preset: "gpu-small", image: "jupyterlab" };
/** `who` asks for `action` on the session `sessionId`. */
const act = (
  who: { token: string },
  action: "pauseSession" | "resumeSession" | "terminateSession",
  sessionId: string,
) => bedApi(bed, who).call(action, { params: { sessionId } });

describe("pause and resume", () => {
  it("frees the GPU for the queue on pause, and takes one again on resume", async () => {
    const stream = await openEventStream(`${bed.t.api.url}/api/v1/sessions/events`, bed.alice.token);
    try {
      // gpu-a has two H100s: alice takes both.
      const [first, second] = await Promise.all([
        bedApi(bed, bed.alice).call("createSession", { body: h100 }),
        bedApi(bed, bed.alice).call("createSession", { body: h100 }),
      ]);
      const a1 = first.id;
      const a2 = second.id;
      await bed.waitFor(bed.alice, a1, (s) => s.phase === "Running", "a1 Running");
      await bed.waitFor(bed.alice, a2, (s) => s.phase === "Running", "a2 Running");

      // bob has to wait.
      const b = (await bedApi(bed, bed.bob).call("createSession", { body: h100 })).id;
      const queued = await bed.waitFor(bed.bob, b, (s) => s.phase === "Queued", "b Queued");
      expect(queued.queue).toMatchObject({ position: 1 });
      expect(queued.reason).toBe("NoCapacity");
      // The queue pages over the history rows, which the worker writes just after the resource's status.
      await expect
        .poll(async () => (await bedApi(bed, bed.bob).call("listQueue")).data)
        .toEqual([expect.objectContaining({ position: 1, session: expect.objectContaining({ id: b }) })]);

      // alice pauses a1: its pod goes, and bob's session starts on the GPU it held.
      const paused = await act(bed.alice, "pauseSession", a1);
      expect(paused.desired_state).toBe("Paused");
      const p = await bed.waitFor(bed.alice, a1, (s) => s.phase === "Paused", "a1 Paused");
      expect(p.cluster_id).toBe(bed.gpu["gpu-a"]?.id);
      expect((await bed.pods("gpu-a")).map((x) => x.name)).not.toContain(p.resource_name);
      await bed.waitFor(bed.bob, b, (s) => s.phase === "Running", "b Running after the pause");

      // Resume: no GPU free, so it waits; when bob terminates, it runs again.
      await act(bed.alice, "resumeSession", a1);
      const waiting = await bed.waitFor(bed.alice, a1, (s) => s.phase === "Queued", "a1 Queued after resume");
      expect(waiting.queue.position).toBe(1);
      await act(bed.bob, "terminateSession", b);
      await bed.waitFor(bed.bob, b, (s) => s.phase === "Terminated", "b Terminated");
      const back = await bed.waitFor(bed.alice, a1, (s) => s.phase === "Running", "a1 Running again");
      // Status times have a second's precision (the Kubernetes convention): a quick resume can share the
      // pause's second, never precede it.
      expect(back.started_at >= p.paused_at).toBe(true);

      // The stream told alice every step of a1, in order.
      await stream.waitFor(
        (e) => e.data.session_id === a1 && e.data.session.phase === "Running" && e.data.previous_phase === "Resuming",
        "a1 resumed",
      );
      const phases = stream.events.filter((e) => e.data.session_id === a1).map((e) => e.data.session.phase);
      const dedup = phases.filter((ph, i) => ph !== phases[i - 1]);
      expect(dedup).toEqual(["Pending", "Starting", "Running", "Pausing", "Paused", "Queued", "Resuming", "Running"]);
      // bob's session is not alice's to see.
      expect(stream.events.some((e) => e.data.session_id === b)).toBe(false);
      const ids = stream.events.filter((e) => e.event.startsWith("session.")).map((e) => BigInt(e.id ?? "0"));
      expect([...ids].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))).toEqual(ids);
    } finally {
      await stream.close();
    }
  });

  it("refuses actions the phase does not allow, saying which are allowed", async () => {
    const s = (
      await bedApi(bed, bed.bob).call("createSession", {
        body: { offering: "l4", preset: "gpu-small", image: "terminal" },
      })
    ).id;
    await bed.waitFor(bed.bob, s, (x) => x.phase === "Running", "Running");
    const resume = await refusalOf(act(bed.bob, "resumeSession", s));
    expect(resume.status).toBe(409);
    expect(resume).toMatchObject({
      code: "invalid_session_state",
      details: { phase: "Running", allowed_actions: ["pause", "restart", "terminate"] },
    });
    await act(bed.bob, "pauseSession", s);
    const again = await refusalOf(act(bed.bob, "pauseSession", s));
    expect(again.status).toBe(409);
    expect(again.code).toBe("invalid_session_state");
  });
});
