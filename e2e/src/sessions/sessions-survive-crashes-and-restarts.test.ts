// Processes die and apiservers restart: an operator killed mid-flight (a session's claim made, its pod
// not yet) is replaced by its standby, which finishes it with exactly one pod per session; the worker
// fails over to another replica without placing anything twice; the management and GPU apiservers
// restart under running watches.
import { ApiError } from "@berth/console/client";
import { LABELS } from "@berth/crds";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bedApi } from "../api-client.ts";
import { type BedProvisioner, installBedStorage, startProvisioner } from "../storage/bed-storage.ts";
import { adminKube, SESSIONS_NS, type SessionsBed, startSessionsBed } from "./harness.ts";

// Journeys wait on real clusters; a loaded machine (other beds running) stretches them.
vi.setConfig({ testTimeout: 180_000 });

let bed: SessionsBed;
beforeAll(async () => {
  bed = await startSessionsBed();
});
afterAll(async () => {
  await bed?.stop();
});

const l4 = { offering: "l4", preset: "gpu-small", image: "terminal" };
const h100 = { offering: "h100", preset: "gpu-small", image: "jupyterlab" };
/** A storage class whose claims nothing binds until the test starts a provisioner for it. */
const HELD_CLASS = "berth-held";

describe("an operator killed mid-flight", () => {
  it("is replaced by its standby, which finishes what it started with exactly one pod per session", async () => {
    const gpuB = bed.gpu["gpu-b"];
    if (!gpuB) throw new Error("no gpu-b");
    // Held open on purpose with real parts: alice's session mounts a volume whose claim nothing binds
    // yet (its storage class has no provisioner until the kill), so the leader makes the claim and then
    // waits for it, with no pod. Bob's session next to it has nothing to wait for.
    const c = bed.fleet.cluster("gpu-b");
    await installBedStorage(c, { storageClass: HELD_CLASS });
    await bedApi(bed, bed.superAdmin).call("createStoragePool", {
      body: {
        name: "held",
        cluster: gpuB.id,
        storage_class: HELD_CLASS,
        sharing: "selected",
        clusters: [gpuB.id],
        manual_capacity_gb: 100,
        default: false,
      },
    });
    const volume = await bedApi(bed, bed.alice).call("createVolume", {
      body: { name: "held", size_gb: 1, pool: "held" },
    });
    const claimPath = `/api/v1/namespaces/${SESSIONS_NS}/persistentvolumeclaims/berth-${volume.id.replace("_", "-")}`;

    const first = gpuB.operator;
    const standby = await gpuB.startOperator("gpu-b-standby");
    expect(standby.isLeader()).toBe(false);
    const answers = await Promise.all([
      bedApi(bed, bed.alice).call("createSession", { body: { ...l4, volumes: [{ volume: volume.id }] } }),
      bedApi(bed, bed.bob).call("createSession", { body: l4 }),
    ]);
    const ids = answers.map((r) => r.id);
    const crs = answers.map((r) => r.resource_name as string);
    const held = crs[0] as string;

    // Every session's pods by its label, terminating ones included, sampled from before the kill until
    // the standby has finished: a second pod for a session at any moment would be counted here.
    const samples: Record<string, number>[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const pods = await bed.pods("gpu-b");
        samples.push(
          Object.fromEntries(crs.map((cr) => [cr, pods.filter((p) => p.labels[LABELS.session] === cr).length])),
        );
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const k = adminKube(c);
    const provisioner: BedProvisioner[] = [];
    try {
      // The leader has started the held session's work: its claim exists, it reported the wait.
      await bed.waitFor(
        bed.alice,
        ids[0] as string,
        (s) =>
          s.conditions?.some(
            (x: { type: string; reason: string }) => x.type === "Ready" && x.reason === "WaitingForClaim",
          ),
        "the leader waiting for the claim",
        60_000,
      );
      // What the leader holds at the kill: the claim made and unbound, and no pod of that session.
      const claim = await k.raw<{ status?: { phase?: string } }>("GET", claimPath);
      const podsAtKill = (await bed.pods("gpu-b")).filter((p) => p.labels[LABELS.session] === held);
      await first?.stop({ release: false });
      expect(claim.status, "the leader made the claim before it was killed").toBe(200);
      expect(claim.body.status?.phase, "the claim was still unbound at the kill").not.toBe("Bound");
      expect(podsAtKill, "the held session had no pod at the kill").toEqual([]);
      // Unheld: the claim can bind now; only the standby can make the pod.
      provisioner.push(startProvisioner(c, { storageClass: HELD_CLASS }));
      for (const [i, id] of ids.entries())
        await bed.waitFor(
          i === 0 ? bed.alice : bed.bob,
          id,
          (s) => s.phase === "Running",
          `${id} Running after the failover`,
          90_000,
        );
      expect(standby.isLeader(), "the held session's pod came from the standby").toBe(true);
    } finally {
      sampling = false;
      await sampler;
      for (const p of provisioner) await p.stop();
      k.close();
    }
    // Sampled, each session's pod seen, and never two of one session at once.
    expect(samples.length).toBeGreaterThan(0);
    for (const cr of crs) {
      expect(
        samples.some((x) => x[cr] === 1),
        `${cr}'s pod seen`,
      ).toBe(true);
      expect(Math.max(...samples.map((x) => x[cr] ?? 0)), `pods of ${cr} at once`).toBe(1);
    }
    // And exactly one now, terminating ones included.
    const pods = await bed.pods("gpu-b");
    for (const cr of crs)
      expect(
        pods.filter((p) => p.labels[LABELS.session] === cr),
        cr,
      ).toHaveLength(1);
  });
});

describe("the worker failing over", () => {
  it("hands the lease to another replica, which places new sessions once and only once", async () => {
    const second = await bed.startWorker("worker-2");
    expect(second.isLeader()).toBe(false);
    await bed.worker.stop({ release: false });
    await second.leading(30_000);
    const { id } = await bedApi(bed, bed.orgAdmin).call("createSession", { body: h100 });
    const s = await bed.waitFor(bed.orgAdmin, id, (x) => x.phase === "Running", "Running under the new leader", 60_000);
    const pods = (await bed.pods("gpu-a")).filter((p) => p.name === s.resource_name);
    expect(pods).toHaveLength(1);
    // Every session placed once: one Started event each (a placement's one Event), and placed once.
    const events = await bedApi(bed, bed.orgAdmin).call("listSessionResourceEvents", { params: { sessionId: id } });
    expect(events.data.filter((e) => e.reason === "Started")).toHaveLength(1);
  });
});

describe("apiserver restarts", () => {
  it("are survived by the worker's and the operators' watches", async () => {
    await bed.fleet.cluster("mgmt").restartApiServer();
    await bed.fleet.cluster("gpu-a").restartApiServer();
    // Right after a restart the apiserver may still answer 429 "storage is (re)initializing": the API
    // says 503 unavailable, and a client retries with the same Idempotency-Key.
    const create = () =>
      bedApi(bed, bed.alice)
        .call("createSession", { body: h100 }, { idempotencyKey: "after-restarts" })
        .catch((e: unknown) => (e instanceof ApiError && e.status === 503 ? e : Promise.reject(e)));
    let created = await create();
    for (let i = 0; created instanceof ApiError && i < 60; i++) {
      await new Promise((r) => setTimeout(r, 500));
      created = await create();
    }
    if (created instanceof ApiError) throw created;
    const id = created.id;
    await bed.waitFor(bed.alice, id, (s) => s.phase === "Running", "Running after both restarts", 90_000);
    // Answered means accepted: the contract gives pause one success, 202 (api/openapi.json).
    await bedApi(bed, bed.alice).call("pauseSession", { params: { sessionId: id } });
    await bed.waitFor(bed.alice, id, (s) => s.phase === "Paused", "Paused after both restarts", 60_000);
  });
});
