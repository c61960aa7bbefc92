// A user asks for a GPU session: it is accepted at once, placed on a cluster with that GPU model,
// dispatched, and a moment later its pod holds a GPU there and the session is Running.
import type { BodyOf } from "@berth/console/client";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { apiAs, bedApi, refusalOf } from "../api-client.ts";
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

const body = (over: Partial<BodyOf<"createSession">> = {}): BodyOf<"createSession"> => ({
  offering: "h100",
  preset: "gpu-small",
  image: "jupyterlab",
  name: "notebook",
  ...over,
});

describe("a member starts a session", () => {
  it("runs it on a cluster with the offering's GPU model, with one GPU bound to its pod", async () => {
    const created = await bedApi(bed, bed.alice).call("createSession", { body: body() });
    expect(created).toMatchObject({
      phase: "Pending",
      gpu_model: H100,
      gpu_count: 1,
      owner_id: bed.alice.id,
      desired_state: "Running",
    });

    const running = await bed.waitFor(bed.alice, created.id, (s) => s.phase === "Running", "Running");
    expect(running).toMatchObject({
      cluster_id: bed.gpu["gpu-a"]?.id,
      node: "gpu-a-1",
      connect_paths: { lab: `/proxy/${created.resource_name}/lab` },
    });
    expect(running.conditions.find((c: { type: string }) => c.type === "Ready")).toMatchObject({
      status: "True",
      reason: "PodRunning",
    });

    const pods = await bed.pods("gpu-a");
    expect(pods).toEqual([expect.objectContaining({ name: created.resource_name, phase: "Running", node: "gpu-a-1" })]);
  });

  it("places an L4 session on the L4 cluster", async () => {
    const created = await bedApi(bed, bed.bob).call("createSession", { body: body({ offering: "l4" }) });
    const running = await bed.waitFor(bed.bob, created.id, (s) => s.phase === "Running", "Running");
    expect(running).toMatchObject({ cluster_id: bed.gpu["gpu-b"]?.id, gpu_model: L4 });
  });

  it("creates one session for two requests with the same Idempotency-Key", async () => {
    const key = `idem-${Date.now()}`;
    // The replay answers as the first did, 201 included: each raw answer is kept to read its status and headers.
    const answers: Response[] = [];
    const bob = apiAs(bed.t.api.url, bed.bob.token, (res) => answers.push(res));
    const a = await bob.call("createSession", { body: body({ offering: "l4" }) }, { idempotencyKey: key });
    const b = await bob.call("createSession", { body: body({ offering: "l4" }) }, { idempotencyKey: key });
    expect(answers.map((res) => res.status)).toEqual([201, 201]);
    expect(b.id).toBe(a.id);
    expect(answers[1]?.headers.get("idempotent-replayed")).toBe("true");
    const mine = await bob.call("listSessions", { query: { scope: "mine", size: 100 } });
    expect(mine.data.filter((s) => s.id === a.id)).toHaveLength(1);
  });

  it("refuses an offering whose GPU model no cluster has, naming the models the fleet offers", async () => {
    const r = await refusalOf(bedApi(bed, bed.alice).call("createSession", { body: body({ offering: "a100" }) }));
    expect(r.status).toBe(422);
    expect(r).toMatchObject({ code: "gpu_model_unavailable", details: { reported_models: [H100, L4] } });
  });
});
