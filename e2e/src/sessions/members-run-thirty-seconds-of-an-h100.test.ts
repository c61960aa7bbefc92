// The finest HAMi tier on the bed (docs/dev/gpu-sharing.md): a node whose HAMi splits each H100 into 32
// vGPUs runs 1/32 sessions (2548 MiB, 3 % of the cores each) pinned to the card, priced per thirty-second
// in the cost preview, with availability counting the thirty-seconds still free.

import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bedApi } from "../api-client.ts";
import { cardUuid } from "../testbed/gpu.ts";
import { adminKube, gpuCluster, H100, MANAGEMENT, SESSIONS_NS, type SessionsBed, startSessionsBed } from "./harness.ts";

vi.setConfig({ testTimeout: 240_000 });

let bed: SessionsBed;
const THIRTY_SECOND_MIB = Math.floor(81559 / 32);

beforeAll(async () => {
  bed = await startSessionsBed({
    fleet: {
      clusters: [
        MANAGEMENT,
        gpuCluster("gpu-a", [{ name: "gpu-a-1", gpuModel: H100, gpuCount: 1, sharing: "hami", vgpuSplit: 32 }]),
      ],
    },
  });
});
afterAll(async () => {
  await bed?.stop();
});

describe("1/32 of an H100", () => {
  const ids: string[] = [];

  it("is priced at its own rate before it starts", async () => {
    const r = await bedApi(bed, bed.alice).call("previewSessionCost", {
      body: { offering: "h100-1-32", duration_seconds: 3600 },
    });
    expect(r).toMatchObject({ offering: "h100-1-32", hourly_rate: "150000", cost: "150000", can_start: true });
  });

  it("runs three sessions on one card, each pod asking HAMi for its thirty-second and pinned to the card", async () => {
    for (let i = 0; i < 3; i++) {
      const body = { offering: "h100-1-32", preset: "cpu-small", image: "jupyterlab" };
      ids.push((await bedApi(bed, bed.alice).call("createSession", { body })).id);
    }
    const running = await Promise.all(
      ids.map((id) => bed.waitFor(bed.alice, id, (s) => s.phase === "Running", "Running", 120_000)),
    );
    const card = cardUuid("gpu-a-1", 0);
    for (const s of running) {
      expect(s).toMatchObject({ gpu_fraction: "1/32", gpu_slice_memory_mib: THIRTY_SECOND_MIB, gpu_occupancy: 1 / 32 });
      expect(s.gpu_cards).toEqual([card]);
    }
    const k = adminKube(bed.fleet.cluster("gpu-a"));
    try {
      const pod = await k.json<{
        metadata: { annotations: Record<string, string> };
        spec: { nodeName: string; containers: { resources: { limits: Record<string, string> } }[] };
        status: { phase: string };
      }>("GET", `/api/v1/namespaces/${SESSIONS_NS}/pods/${running[0].resource_name}`);
      expect(pod.status.phase).toBe("Running");
      expect(pod.spec.nodeName).toBe("gpu-a-1");
      expect(pod.metadata.annotations["nvidia.com/use-gpuuuid"]).toBe(card);
      expect(pod.spec.containers[0]?.resources.limits).toMatchObject({
        "nvidia.com/gpu": "1",
        "nvidia.com/gpumem": String(THIRTY_SECOND_MIB),
        "nvidia.com/gpucores": "3",
      });
    } finally {
      k.close();
    }
  });

  it("leaves the other 29 thirty-seconds in availability", async () => {
    const r = await bedApi(bed, bed.alice).call("getGpuAvailability");
    const a = r.clusters.find((c) => c.cluster_id === bed.gpu["gpu-a"]?.id);
    expect(a).toMatchObject({ sharing: true, whole_free: 0 });
    expect(a?.slices_free["1/32"]).toBe(29);
    expect(a?.slices_free["1/16"]).toBe(14);
  });
});
