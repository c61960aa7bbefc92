// biome-ignore-all lint/suspicious/noExplicitAny: the bench reads the API's JSON as it comes
// Storage on the bed (docs/dev/storage.md). Figures, in one run:
//   1. create → Running of a one-GPU session with one fresh volume vs. without (baseline), sequential,
//      p50/p99, and the claim's share (the difference of the medians);
//   2. the volume-sync tick's cost with --volumes volumes over --pools pools: CPU per tick and writes to
//      the management cluster per tick when nothing changed (target: none), next to a tick that changes
//      every pool;
//   3. the idle-claim pass (controllers/src/sessions/claims.ts) over the same volumes: CPU per pass.
//
//   node bench/src/storage-volumes.ts [--sessions=20] [--volumes=1000] [--pools=10] [--ticks=50]
import { parseArgs } from "node:util";
import { applyStorageReport } from "@berth/api/testing";
import { idleClaims } from "@berth/controllers";
import { H100, type SessionsBed, startSessionsBed } from "@berth/e2e/sessions";
import { installBedStorage, startProvisioner } from "@berth/e2e/storage";
import { apiAs } from "./api.ts";
import { upperPercentile } from "./kit/percentile.ts";

const { values } = parseArgs({
  options: {
    sessions: { type: "string", default: "20" },
    volumes: { type: "string", default: "1000" },
    pools: { type: "string", default: "10" },
    ticks: { type: "string", default: "50" },
  },
});
const N = Number(values.sessions);
const VOLUMES = Number(values.volumes);
const POOLS = Number(values.pools);
const TICKS = Number(values.ticks);
const CLASS = "berth-shared";

async function untilRunning(bed: SessionsBed, id: string): Promise<void> {
  await bed.waitFor(bed.alice, id, (s) => s.phase === "Running", "Running", 120_000);
}

async function main() {
  const node = (name: string) => ({ name, gpuModel: H100, gpuCount: 8 });
  const bed = await startSessionsBed({
    fleet: {
      clusters: [
        { name: "mgmt", kind: "management" },
        { name: "gpu-a", kind: "gpu", nodes: [node("gpu-a-1")], gpuRuntimeClass: true, gpuDevicePlugin: true },
      ],
    },
    worker: { claimIdleMs: 60 * 60_000 },
  });
  const a = bed.fleet.cluster("gpu-a");
  await installBedStorage(a, { storageClass: CLASS, capacityGb: 100_000 });
  const provisioner = startProvisioner(a, { storageClass: CLASS, intervalMs: 50 });
  try {
    const alice = apiAs(bed.t.api.url, bed.alice);
    const superAdmin = apiAs(bed.t.api.url, bed.superAdmin);
    await superAdmin.call("createStoragePool", {
      body: { name: "shared", cluster: bed.gpu["gpu-a"]?.id as string, storage_class: CLASS },
    });

    // 1. create → Running, with and without a volume, one at a time (alternating, so drift hits both).
    const withVol: number[] = [];
    const without: number[] = [];
    for (let i = 0; i < N; i++) {
      for (const vol of [false, true]) {
        let volumes: { volume: string }[] = [];
        if (vol) {
          const v = await alice.call("createVolume", { body: { name: `b-${i}`, size_gb: 1 } });
          volumes = [{ volume: v.id }];
        }
        const t0 = performance.now();
        const s = await alice.call("createSession", {
          body: { offering: "h100", preset: "gpu-small", image: "jupyterlab", volumes },
        });
        await untilRunning(bed, s.id);
        (vol ? withVol : without).push(performance.now() - t0);
        await alice.call("terminateSession", { params: { sessionId: s.id } });
        await bed.waitFor(bed.alice, s.id, (x) => x.phase === "Terminated", "Terminated", 120_000);
      }
    }
    console.log(`1. create → Running, ${N} each (ms)        p50      p99`);
    console.log(
      `   without a volume (baseline)     ${upperPercentile(without, 50).toFixed(0).padStart(8)} ${upperPercentile(without, 99).toFixed(0).padStart(8)}`,
    );
    console.log(
      `   with one fresh volume           ${upperPercentile(withVol, 50).toFixed(0).padStart(8)} ${upperPercentile(withVol, 99).toFixed(0).padStart(8)}`,
    );
    console.log(
      `   the claim's share (p50 difference): ${(upperPercentile(withVol, 50) - upperPercentile(without, 50)).toFixed(0)} ms`,
    );

    // 2. the volume-sync tick: pools on the cluster, volumes in Postgres.
    const clusterId = bed.gpu["gpu-a"]?.id as string;
    for (let p = 1; p < POOLS; p++)
      await superAdmin.call("createStoragePool", {
        body: {
          name: `pool-${p}`,
          cluster: clusterId,
          storage_class: `class-${p}`,
          manual_capacity_gb: 1000,
          default: false,
        },
      });
    const now = new Date();
    const rows = Array.from({ length: VOLUMES }, (_, i) => ({
      id: `vol_bench${String(i).padStart(15, "0")}`,
      organization_id: bed.org.id,
      owner_kind: "user",
      owner_id: bed.alice.id,
      name: `bench-${i}`,
      size_gb: 1,
      pool: i % POOLS === 0 ? "shared" : `pool-${i % POOLS}`,
      namespace: "bench",
      cr_name: `vol-bench${i}`,
      created_by: bed.alice.id,
      created_at: now,
      updated_at: now,
    }));
    for (let i = 0; i < rows.length; i += 500) await bed.t.database.db("volumes").insert(rows.slice(i, i + 500));
    const report = (gb: number) => ({
      cluster_id: clusterId,
      observed_at: new Date().toISOString(),
      classes: [CLASS, ...Array.from({ length: POOLS - 1 }, (_, p) => `class-${p + 1}`)].map((c) => ({
        storage_class: c,
        available_gb: gb,
        via: "csi_capacity" as const,
      })),
    });
    await applyStorageReport(bed.t.deps, clusterId, report(5000)); // settle
    const tick = async (gbOf: (i: number) => number) => {
      let writes = 0;
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      for (let i = 0; i < TICKS; i++)
        writes += (await applyStorageReport(bed.t.deps, clusterId, report(gbOf(i)))).changed;
      const cpu = process.cpuUsage(c0);
      return {
        cpuMs: (cpu.user + cpu.system) / 1000 / TICKS,
        wallMs: (performance.now() - t0) / TICKS,
        writes: writes / TICKS,
      };
    };
    const same = await tick(() => 5000);
    const changing = await tick((i) => 6000 + i);
    console.log(`2. volume-sync tick, ${POOLS} pools, ${VOLUMES} volumes     CPU/tick  wall/tick  mgmt writes/tick`);
    console.log(
      `   nothing changed                       ${same.cpuMs.toFixed(2).padStart(7)} ms ${same.wallMs.toFixed(2).padStart(7)} ms ${same.writes.toFixed(1).padStart(8)}`,
    );
    console.log(
      `   every pool changed (baseline)         ${changing.cpuMs.toFixed(2).padStart(7)} ms ${changing.wallMs.toFixed(2).padStart(7)} ms ${changing.writes.toFixed(1).padStart(8)}`,
    );
    console.log("   (CPU of this process: the API's route work and its client; the apiserver's own is not counted)");

    // 3. the idle-claim pass over as many volumes and sessions.
    const vols = Array.from({ length: VOLUMES }, (_, i) => [
      `bench/vol-${i}`,
      {
        metadata: { name: `vol-${i}`, namespace: "bench" },
        spec: {},
        status: { boundCluster: clusterId, claimName: `c-${i}` },
      },
    ]) as any;
    const sessions = Array.from({ length: VOLUMES / 2 }, (_, i) => ({
      metadata: { name: `ses-${i}`, namespace: "bench" },
      spec: { volumes: [{ volume: `vol-${i}` }], desiredState: "Running" },
      status: { phase: "Running" },
    })) as any;
    const last = new Map<string, number>();
    const c0 = process.cpuUsage();
    for (let i = 0; i < TICKS; i++) idleClaims(vols, sessions, last, Date.now(), 15 * 60_000);
    const cpu = process.cpuUsage(c0);
    console.log(
      `3. idle-claim pass, ${VOLUMES} bound volumes, ${VOLUMES / 2} sessions: ${((cpu.user + cpu.system) / 1000 / TICKS).toFixed(3)} ms CPU per pass, 0 writes while none is idle`,
    );
  } finally {
    await provisioner.stop();
    await bed.stop();
  }
}

await main();
