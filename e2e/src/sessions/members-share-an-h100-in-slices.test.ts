// Fractional GPU tiers on a HAMi cluster of the bed (docs/dev/gpu-sharing.md): eight 1/8 sessions share
// one H100 and a ninth takes the next card; every pod asks HAMi's resources, is pinned to its card and is
// scheduled by kube-scheduler for real; availability counts slices per fraction; quotas count occupancy;
// a drained node's slices are placed again on another node's card; and slices where no sharing layer runs,
// fractions not offered and slices under 1 GiB are refused with their codes.

import type { BodyOf } from "@berth/console/client";
import { ResourcePolicyKind, resourcePath, sessionPath } from "@berth/crds";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bedApi, refusalOf } from "../api-client.ts";
import { cardUuid } from "../testbed/gpu.ts";
import { adminKube, gpuCluster, H100, MANAGEMENT, SESSIONS_NS, type SessionsBed, startSessionsBed } from "./harness.ts";

vi.setConfig({ testTimeout: 240_000 });

let bed: SessionsBed;
const EIGHTH_MIB = Math.floor(81559 / 8);

beforeAll(async () => {
  bed = await startSessionsBed({
    fleet: {
      clusters: [
        MANAGEMENT,
        gpuCluster("gpu-a", [
          { name: "gpu-a-1", gpuModel: H100, gpuCount: 2, sharing: "hami" },
          { name: "gpu-a-2", gpuModel: H100, gpuCount: 1, sharing: "hami" },
        ]),
        // Whole cards only: no sharing layer.
        gpuCluster("gpu-b", [{ name: "gpu-b-1", gpuModel: H100, gpuCount: 1 }]),
      ],
    },
  });
  // Nine sessions for one person: the global policy's default is four at once (GPUs stay at 4).
  const mgmt = adminKube(bed.fleet.cluster("mgmt"));
  try {
    await mgmt.json(
      "PATCH",
      resourcePath(ResourcePolicyKind, { name: "global" }),
      { spec: { limits: { maxConcurrentSessionsPerUser: 16 } } },
      "application/merge-patch+json",
    );
  } finally {
    mgmt.close();
  }
});
afterAll(async () => {
  await bed?.stop();
});

async function create(offering: string) {
  const body = { offering, preset: "cpu-small", image: "jupyterlab" };
  return (await bedApi(bed, bed.alice).call("createSession", { body })).id;
}

interface Pod {
  metadata: { annotations: Record<string, string> };
  spec: { nodeName: string; containers: { resources: { limits: Record<string, string> } }[] };
  status: { phase: string };
}

async function sessionPod(crName: string) {
  const k = adminKube(bed.fleet.cluster("gpu-a"));
  try {
    return await k.json<Pod>("GET", `/api/v1/namespaces/${SESSIONS_NS}/pods/${crName}`);
  } finally {
    k.close();
  }
}

const a1card0 = cardUuid("gpu-a-1", 0);
const a1card1 = cardUuid("gpu-a-1", 1);
const a2card0 = cardUuid("gpu-a-2", 0);
const eighths: string[] = [];

describe("eight 1/8 sessions", () => {
  it("share one H100, and a ninth takes the next card", async () => {
    for (let i = 0; i < 9; i++) eighths.push(await create("h100-1-8"));
    const running = await Promise.all(
      eighths.map((id) => bed.waitFor(bed.alice, id, (s) => s.phase === "Running", "Running", 120_000)),
    );
    for (const s of running) {
      expect(s.cluster_id).toBe(bed.gpu["gpu-a"]?.id);
      expect(s.gpu_fraction).toBe("1/8");
      expect(s.gpu_slice_memory_mib).toBe(EIGHTH_MIB);
      expect(s.gpu_occupancy).toBe(0.125);
    }
    const cards = running.map((s) => s.gpu_cards?.[0]);
    expect(cards.slice(0, 8)).toEqual(Array(8).fill(a1card0));
    expect(cards[8]).toBe(a1card1);
    expect(running.every((s) => s.node === "gpu-a-1")).toBe(true);
  });

  it("ask HAMi for their slice in its resource names and are pinned to their card", async () => {
    const detail = await bedApi(bed, bed.alice).call("getSession", { params: { sessionId: eighths[0] as string } });
    const pod = await sessionPod(detail.resource_name);
    // The operator reports the card the running pod holds; the Session's status carries it.
    const mgmt = adminKube(bed.fleet.cluster("mgmt"));
    try {
      await expect
        .poll(
          async () =>
            (
              await mgmt.json<{ status?: { gpuDevices?: string[] } }>(
                "GET",
                sessionPath(detail.namespace, detail.resource_name),
              )
            ).status?.gpuDevices,
          { timeout: 30_000 },
        )
        .toEqual([a1card0]);
    } finally {
      mgmt.close();
    }
    expect(pod.status.phase).toBe("Running");
    expect(pod.spec.nodeName).toBe("gpu-a-1");
    expect(pod.metadata.annotations["nvidia.com/use-gpuuuid"]).toBe(a1card0);
    expect(pod.spec.containers[0]?.resources.limits).toMatchObject({
      "nvidia.com/gpu": "1",
      "nvidia.com/gpumem": String(EIGHTH_MIB),
      "nvidia.com/gpucores": "12",
    });
  });

  it("show in the inventory as per-card memory and cores held", async () => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const rows = await bed.t.database
        .db("gpu_devices")
        .where({ cluster_id: bed.gpu["gpu-a"]?.id, node_name: "gpu-a-1" })
        .orderBy("index");
      if (rows[0]?.vgpus_used === 8 && rows[1]?.vgpus_used === 1) {
        expect(rows[0]).toMatchObject({ uuid: a1card0, memory_mib: 81559, memory_used_mib: 8 * EIGHTH_MIB });
        expect(rows[0].cores_used).toBe(96);
        break;
      }
      if (Date.now() > deadline) throw new Error(`inventory never showed the slices: ${JSON.stringify(rows)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  });

  it("show administrators each card's free memory and cores", async () => {
    const r = await bedApi(bed, bed.superAdmin).call("listGpuDevices", {
      query: { cluster: bed.gpu["gpu-a"]?.id, node: "gpu-a-1" },
    });
    expect(r.data[0]).toMatchObject({
      uuid: a1card0,
      memory_mib: 81559,
      sharing: { memory_free_mib: 81559 - 8 * EIGHTH_MIB, cores_used: 96, vgpus: 10, vgpus_used: 8, healthy: true },
    });
  });

  it("leave gpu-availability whole cards and slices per fraction", async () => {
    const r = await bedApi(bed, bed.alice).call("getGpuAvailability");
    const a = r.clusters.find((c) => c.cluster_id === bed.gpu["gpu-a"]?.id && c.gpu_model === H100);
    expect(a).toMatchObject({ sharing: true, whole_free: 1 });
    // gpu-a-1/1 holds one eighth (7 more fit), gpu-a-2/0 is empty (8).
    expect(a?.slices_free["1/8"]).toBe(15);
    expect(a?.slices_free["1/2"]).toBe(3);
    const b = r.clusters.find((c) => c.cluster_id === bed.gpu["gpu-b"]?.id);
    expect(b).toMatchObject({ sharing: false, whole_free: 1, slices_free: {} });
  });

  it("count their occupancy against the GPU quota (nine eighths are 1.125 of 4)", async () => {
    const preview = (preset: string) =>
      bedApi(bed, bed.alice).call("previewSessionCost", { body: { offering: "h100", preset, duration_seconds: 3600 } });
    const medium = await preview("gpu-medium");
    // gpu-medium asks 2 whole GPUs: 1.125 + 2 = 3.125 fits in 4.
    expect(medium.can_start, JSON.stringify(medium)).toBe(true);
    const big = await preview("gpu-large");
    expect(big.refusal?.code).toBe("quota_exceeded");
    expect(JSON.stringify(big.refusal)).toContain("1.125");
  });
});

describe("a drained node", () => {
  it("has its slices placed again on another node's card", async () => {
    // Keep the ninth eighth (gpu-a-1/1) and add a quarter beside it; end the first eight.
    const quarter = await create("h100-1-4");
    const q = await bed.waitFor(bed.alice, quarter, (s) => s.phase === "Running", "Running", 60_000);
    expect(q.gpu_cards).toEqual([a1card1]);
    for (const sessionId of eighths.slice(0, 8))
      await bedApi(bed, bed.alice).call("terminateSession", { params: { sessionId } });
    const node = { clusterId: bed.gpu["gpu-a"]?.id as string, nodeName: "gpu-a-1" };
    // Answered is a 2xx: a refusal throws its ApiError.
    await bedApi(bed, bed.superAdmin).call("drainNode", { params: node, body: {} });
    for (const id of [eighths[8] as string, quarter]) {
      const moved = await bed.waitFor(
        bed.alice,
        id,
        (s) => s.phase === "Running" && s.node === "gpu-a-2",
        "Running on gpu-a-2",
        120_000,
      );
      expect(moved.gpu_cards).toEqual([a2card0]);
    }
    await bedApi(bed, bed.superAdmin).call("uncordonNode", { params: node, body: {} });
  });
});

describe("bad input", () => {
  it("a slice pinned to a cluster without a sharing layer: 422 gpu_sharing_unavailable, naming those with one", async () => {
    const r = await refusalOf(
      bedApi(bed, bed.alice).call("createSession", {
        body: { offering: "h100-1-4", preset: "cpu-small", image: "jupyterlab", cluster_id: bed.gpu["gpu-b"]?.id },
      }),
    );
    expect(r.status).toBe(422);
    expect(r.code).toBe("gpu_sharing_unavailable");
    expect(r.details).toMatchObject({
      fraction: "1/4",
      sharing_clusters: [bed.gpu["gpu-a"]?.id],
      supported_layers: ["hami"],
    });
  });

  it("a fraction not offered: 400 gpu_fraction_not_offered with those that are", async () => {
    // A fraction outside the contract's list, on purpose: the API names the ones it offers.
    const third = {
      name: "h100-third",
      display_name: "H100 1/3",
      gpu_model: H100,
      tier: "shared",
      fraction: "1/3",
      gpu_memory_mib: 81559,
      hourly_credit_rate: "1500000",
    } as unknown as BodyOf<"createOffering">;
    const r = await refusalOf(bedApi(bed, bed.superAdmin).call("createOffering", { body: third }));
    expect(r.status).toBe(400);
    expect(r.code).toBe("gpu_fraction_not_offered");
    expect(r.details.allowed).toEqual(["1", "1/2", "1/4", "1/8", "1/16", "1/32"]);
  });

  it("a slice under 1 GiB: 400 gpu_slice_too_small with the largest fraction that fits", async () => {
    const r = await refusalOf(
      bedApi(bed, bed.superAdmin).call("createOffering", {
        body: {
          name: "tiny-eighth",
          display_name: "Tiny 1/8",
          gpu_model: "NVIDIA-T4-4GB",
          tier: "shared",
          fraction: "1/8",
          gpu_memory_mib: 4096,
          hourly_credit_rate: "100000",
        },
      }),
    );
    expect(r.status).toBe(400);
    expect(r.code).toBe("gpu_slice_too_small");
    expect(r.details).toMatchObject({ slice_memory_mib: 512, minimum_mib: 1024, largest_fraction: "1/4" });
  });
});
