// A user asks for a GPU session: it is accepted at once, placed on a cluster with that GPU model,
// dispatched, and a moment later its pod holds a GPU there and the session is Running.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { H100, L4, type SessionsBed, startSessionsBed } from "./harness.ts";

// Journeys wait on real clusters; a loaded machine (other beds running) stretches them.
vi.setConfig({ testTimeout: 180_000 });

let bed: SessionsBed;
beforeAll(async () => {
  bed = await startSessionsBed();
});
afterAll(async () => {
  await bed?.stop();
});

const body = (over: Record<string, unknown> = {}) => ({
  offering: "h100",
  preset: "gpu-small",
  image: "jupyterlab",
  name: "notebook",
  ...over,
});

describe("a member starts a session", () => {
  it("runs it on a cluster with the offering's GPU model, with one GPU bound to its pod", async () => {
    const created = await bed.call(bed.alice, "POST", "/api/v1/sessions", body());
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({
      phase: "Pending",
      gpu_model: H100,
      gpu_count: 1,
      owner_id: bed.alice.id,
      desired_state: "Running",
    });

    const running = await bed.waitFor(bed.alice, created.body.id, (s) => s.phase === "Running", "Running");
    expect(running).toMatchObject({
      cluster_id: bed.gpu["gpu-a"]?.id,
      node: "gpu-a-1",
      connect_paths: { lab: `/proxy/${created.body.resource_name}/lab` },
    });
    expect(running.conditions.find((c: { type: string }) => c.type === "Ready")).toMatchObject({
      status: "True",
      reason: "PodRunning",
    });

    const pods = await bed.pods("gpu-a");
    expect(pods).toEqual([
      expect.objectContaining({ name: created.body.resource_name, phase: "Running", node: "gpu-a-1" }),
    ]);
  });

  it("places an L4 session on the L4 cluster", async () => {
    const created = await bed.call(bed.bob, "POST", "/api/v1/sessions", body({ offering: "l4" }));
    expect(created.status).toBe(201);
    const running = await bed.waitFor(bed.bob, created.body.id, (s) => s.phase === "Running", "Running");
    expect(running).toMatchObject({ cluster_id: bed.gpu["gpu-b"]?.id, gpu_model: L4 });
  });

  it("creates one session for two requests with the same Idempotency-Key", async () => {
    const key = `idem-${Date.now()}`;
    const a = await bed.call(bed.bob, "POST", "/api/v1/sessions", body({ offering: "l4" }), { "Idempotency-Key": key });
    const b = await bed.call(bed.bob, "POST", "/api/v1/sessions", body({ offering: "l4" }), { "Idempotency-Key": key });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.body.id).toBe(a.body.id);
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    const mine = await bed.call(bed.bob, "GET", "/api/v1/sessions?scope=mine&size=100");
    expect(mine.body.data.filter((s: { id: string }) => s.id === a.body.id)).toHaveLength(1);
  });

  it("refuses an offering whose GPU model no cluster has, naming the models the fleet offers", async () => {
    const r = await bed.call(bed.alice, "POST", "/api/v1/sessions", body({ offering: "a100" }));
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: "gpu_model_unavailable", details: { reported_models: [H100, L4] } });
  });
});
