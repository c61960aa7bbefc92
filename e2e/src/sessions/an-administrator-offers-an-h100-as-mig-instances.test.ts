// biome-ignore-all lint/suspicious/noExplicitAny: journeys read the API's JSON as it comes
// MIG on the bed (docs/dev/gpu-sharing.md): a node whose two H100s are MIG-partitioned advertises
// `nvidia.com/mig-<profile>` as NVIDIA's device plugin does; nothing of it is offered until a super_admin
// marks the node with a layout. Then a member's 3g.40gb session is placed on it, its pod asks one instance
// of the profile (no whole GPU) and runs on kwok; the cost preview and the ledger both charge half the
// card's rate, to the unit; the quota counts half a GPU.

import { checkLedgerInvariants } from "@berth/api/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bedApi, refusalOf } from "../api-client.ts";
import { until } from "../until.ts";
import { adminKube, gpuCluster, H100, MANAGEMENT, SESSIONS_NS, type SessionsBed, startSessionsBed } from "./harness.ts";

vi.setConfig({ testTimeout: 240_000 });

const LAYOUT = { "3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2 };
// 3g.40gb holds 4 of 8 memory slices (3 of 7 compute): half an H100, whose whole rate is 4 credits an hour.
const HALF_AN_H100 = 2_000_000n;
let bed: SessionsBed;

beforeAll(async () => {
  bed = await startSessionsBed({
    operatorUsageIntervalMs: 2_000,
    fleet: {
      clusters: [
        MANAGEMENT,
        gpuCluster("gpu-a", [
          { name: "gpu-a-whole", gpuModel: H100, gpuCount: 1 },
          { name: "gpu-a-mig", gpuModel: H100, gpuCount: 2, mig: LAYOUT, labels: { "berth.dev/mig": "mixed" } },
        ]),
      ],
    },
  });
});
afterAll(async () => {
  await bed?.stop();
});

const mig = { offering: "h100-mig-3g-40gb", preset: "cpu-small", image: "jupyterlab" };

describe("an H100 offered as MIG instances", () => {
  let sessionId = "";

  it("offers no MIG profile until an administrator marks the node", async () => {
    const preview = await bedApi(bed, bed.alice).call("previewSessionCost", {
      body: { offering: mig.offering, duration_seconds: 3600 },
    });
    expect(preview).toMatchObject({ can_start: false, refusal: { code: "mig_profile_unavailable" } });
    const created = await refusalOf(bedApi(bed, bed.alice).call("createSession", { body: mig }));
    expect([created.status, created.code]).toEqual([422, "mig_profile_unavailable"]);
  });

  it("marks the node by its label; availability shows the layout's instances", async () => {
    const clusterId = bed.gpu["gpu-a"]?.id as string;
    const admin = bedApi(bed, bed.superAdmin);
    const bad = await refusalOf(
      admin.call("createClusterMigLayout", {
        params: { clusterId },
        body: { selector: "berth.dev/mig=mixed", gpu_model: H100, profiles: { "3g.40gb": 3 } },
      }),
    );
    expect([bad.status, bad.code]).toEqual([400, "mig_layout_overfilled"]);
    const r = await admin.call("createClusterMigLayout", {
      params: { clusterId },
      body: { selector: "berth.dev/mig=mixed", gpu_model: H100, profiles: LAYOUT },
    });
    expect(r.nodes).toEqual([{ name: "gpu-a-mig", advertised: { "1g.10gb": 4, "2g.20gb": 2, "3g.40gb": 2 } }]);
    const a = await bedApi(bed, bed.alice).call("getGpuAvailability");
    const row = a.clusters.find((c) => c.cluster_id === clusterId && c.gpu_model === H100);
    expect(row).toMatchObject({ mig_free: { "1g.10gb": 4, "2g.20gb": 2, "3g.40gb": 2 }, whole_free: 1 });
  });

  it("prices a 3g.40gb at half the card's rate before it starts", async () => {
    const r = await bedApi(bed, bed.alice).call("previewSessionCost", {
      body: { offering: mig.offering, duration_seconds: 3600 },
    });
    expect(r).toMatchObject({ hourly_rate: HALF_AN_H100.toString(), cost: "2000000", can_start: true });
  });

  it("runs the session on the MIG node, its pod asking one 3g.40gb and no whole GPU", async () => {
    const running = await bed.startRunning(bed.alice, mig);
    sessionId = running.id;
    expect(running).toMatchObject({ gpu_mig_profile: "3g.40gb", gpu_occupancy: 0.5, gpu_count: 1 });
    const k = adminKube(bed.fleet.cluster("gpu-a"));
    try {
      const pod = await k.json<any>("GET", `/api/v1/namespaces/${SESSIONS_NS}/pods/${running.resource_name}`);
      expect(pod.status.phase).toBe("Running");
      expect(pod.spec.nodeName).toBe("gpu-a-mig");
      const limits = pod.spec.containers[0].resources.limits;
      expect(limits["nvidia.com/mig-3g.40gb"]).toBe("1");
      expect(limits["nvidia.com/gpu"]).toBeUndefined();
    } finally {
      k.close();
    }
    // The whole card beside it is still whole; one 3g.40gb is left.
    await until(
      "availability counts the instance",
      async () => {
        const a = await bedApi(bed, bed.alice).call("getGpuAvailability");
        const row = a.clusters.find((c) => c.gpu_model === H100);
        return row?.mig_free["3g.40gb"] === 1 && row?.whole_free === 1;
      },
      30_000,
    );
  });

  it("charges the ledger half the card's rate for the time it ran, to the unit", async () => {
    const db = bed.t.database.db;
    await until(
      "two billed samples",
      async () => (await db("usage_samples").where({ session: sessionId }).whereNotNull("billed_at")).length >= 2,
      60_000,
    );
    const samples = await db("usage_samples")
      .where({ session: sessionId })
      .whereNotNull("billed_at")
      .orderBy("period_start")
      .select("period_start", "period_end", "gpu_seconds");
    for (let i = 1; i < samples.length; i++) expect(samples[i].period_start).toEqual(samples[i - 1].period_end);
    const ranMs = BigInt(Date.parse(samples.at(-1).period_end) - Date.parse(samples[0].period_start));
    const charges = await db("ledger_transactions").where({ kind: "charge", session_id: sessionId }).select("amount");
    const charged = charges.reduce((n: bigint, c: any) => n + BigInt(c.amount), 0n);
    expect(charged).toBe((HALF_AN_H100 * ranMs) / 3_600_000n);
    // The meter counts the instance as the session's GPU.
    expect(Number(samples[0].gpu_seconds)).toBeGreaterThan(0);
    expect(await checkLedgerInvariants(db)).toEqual([]);
  });
});
