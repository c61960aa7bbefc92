// biome-ignore-all lint/suspicious/noExplicitAny: the bench reads the API's and Kubernetes' JSON as it comes
// Snapshot and restore of a 1 GiB volume through Berth on the bed's real node (e2e/src/real/real-fleet.ts:
// the hostpath CSI driver, the upstream snapshot controller and csi-snapshotter), against a plain
// `cp -a` of the same folder on the same disk in the same run. A JupyterLab session writes 1 GiB of random
// bytes into the volume and is paused; then, per round:
//   snapshot: POST .../snapshots → the API says ready (the worker's SnapshotLoop saw readyToUse), beside
//     when gpu-b's VolumeSnapshot said readyToUse and what the plugin's copy took (its log);
//   restore: POST .../restore → the API says the new volume is restored (its claim Bound, filled by the
//     external-provisioner through the plugin), beside the plugin's copy;
//   baseline: `cp -a` of the volume's folder, and of the snapshot's copy, to a new folder beside them.
// Every copy starts after a `sync` (not timed), so none pays for the writeback of the one before.
// The snapshot and the restored volume are deleted after each round (the restored volume's data waits for
// its purge, as any deleted volume's).
//   node bench/src/storage-snapshots.ts [--rounds 3] [--interval-ms 500]
// --interval-ms is the worker's snapshot pass (default 5 s in a deployment): up to two passes of it are in
// each API figure. Needs root and containerd (the real node); says why and stops elsewhere.
import { execFileSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { HttpKube } from "@berth/controllers/kube";
import { canRunRealNode, kubeConfigFrom } from "@berth/e2e";
import { openLab, REAL_PRESET, runCell, startRealFleet } from "@berth/e2e/real";
import { answering, retrying } from "./api.ts";
import { lowerMedian } from "./kit/median.ts";

const { values } = parseArgs({
  options: { rounds: { type: "string", default: "3" }, "interval-ms": { type: "string", default: "500" } },
});
const ROUNDS = Number(values.rounds);
const INTERVAL = Number(values["interval-ms"]);
const can = canRunRealNode();
if (!can.ok) {
  console.log(`storage-snapshots: ${can.reason}; nothing measured`);
  process.exit(0);
}

const NS = "berth-sessions";
async function until<T>(f: () => Promise<T | undefined>, what: string, ms = 600_000, every = 50): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await sleep(every);
  }
}
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const claimOf = (volumeId: string) => `berth-${volumeId.replace("_", "-")}`;
const timed = (f: () => void) => {
  const t0 = performance.now();
  f();
  return performance.now() - t0;
};

const f = await startRealFleet(["jupyterlab"], {
  nodeName: "gpu-b-real-snapbench",
  workerSnapshots: { intervalMs: INTERVAL },
});
for (const sig of ["SIGINT", "SIGTERM"] as const)
  process.once(sig, () => {
    void f.stop().finally(() => process.exit(130));
  });
try {
  const gpuB = new HttpKube(kubeConfigFrom(f.bed.fleet.cluster("gpu-b").kubeconfig));
  // Sent again when no answer came (a kept-alive connection the API closed while a cell ran, seen as
  // ECONNRESET); names are unique per volume, so a create that did land answers 409, never a second one.
  const call = retrying(
    answering(() => f.bed.t.api.url),
    {
      attempts: 3,
      backoffMs: () => 200,
      again: (_op, answer) => answer === undefined,
    },
  );
  const stage = (what: string) => console.error(`[storage-snapshots] ${new Date().toISOString()} ${what}`);
  const ok = async (who: any, op: string, args: any) => {
    const r = await call(who, op as never, args);
    if (!r.ok) throw new Error(`${op}: ${r.status} ${JSON.stringify(r).slice(0, 400)}`);
    return r.body as any;
  };
  const alice = f.bed.alice;
  const vol = await ok(alice, "createVolume", { body: { name: "data", size_gb: 1, pool: "real" } });
  const session = await ok(alice, "createSession", {
    body: { offering: "l4", preset: REAL_PRESET, image: f.images.jupyterlab?.name, volumes: [{ volume: vol.id }] },
  });
  const running = await f.bed.waitFor(alice, session.id, (x) => x.phase === "Running", "Running", 180_000);
  stage("session Running; writing 1 GiB from a cell");
  const lab = await openLab(f, alice, session.id, running.resource_name);
  await runCell(
    f,
    running.resource_name,
    lab,
    "import os\nwith open('/home/jovyan/work/blob.bin','wb') as o:\n    for _ in range(16): o.write(os.urandom(64*1024*1024))\n    o.flush(); os.fsync(o.fileno())",
    300_000,
  );
  stage("written; pausing");
  await ok(alice, "pauseSession", { params: { sessionId: session.id } });
  await f.bed.waitFor(alice, session.id, (x) => x.phase === "Paused", "Paused", 120_000);
  // The kubelet unmounts the volume after the pod is gone: the plugin refuses a snapshot of a volume
  // mounted writable, so the rounds start once no mount of it is left (the node's mount table).
  const source = f.csi.volumePath(`${NS}/${claimOf(vol.id)}`);
  await until(
    async () => (readFileSync("/proc/self/mountinfo", "utf8").includes(source) ? undefined : true),
    "the volume unmounted",
    120_000,
  );
  const pluginLog = join(dirname(dirname(dirname(source))), "hostpath-plugin.log");
  const copied = (what: RegExp) => {
    const line =
      readFileSync(pluginLog, "utf8")
        .split("\n")
        .filter((l) => what.test(l))
        .at(-1) ?? "";
    const m = /copied in ([\d.]+)(ms|s)/.exec(line);
    return m ? Number(m[1]) * (m[2] === "s" ? 1000 : 1) : Number.NaN;
  };

  const rows: Record<string, number[]> = {
    snapApi: [],
    snapCluster: [],
    snapPlugin: [],
    cpVolume: [],
    restoreApi: [],
    restorePlugin: [],
    cpSnapshot: [],
  };
  for (let i = 0; i < ROUNDS; i++) {
    stage(`round ${i + 1}`);
    // Each copy, Berth's and the baseline's, starts with no dirty pages: the one before is flushed first
    // (`sync`, not timed), or its writeback is counted in the next.
    execFileSync("sync");
    // Baseline first: the same folder, the same disk, nothing else copying.
    const beside = `${source}.cp-${i}`;
    rows.cpVolume?.push(timed(() => execFileSync("cp", ["-a", source, beside])));
    rmSync(beside, { recursive: true, force: true });
    execFileSync("sync");

    let t0 = performance.now();
    const snap = await ok(alice, "createVolumeSnapshot", { params: { volumeId: vol.id }, body: { name: `r${i}` } });
    const vsPath = `/apis/snapshot.storage.k8s.io/v1/namespaces/${NS}/volumesnapshots/berth-${snap.id.replace("_", "-")}`;
    let clusterMs: number | undefined;
    await until(async () => {
      if (clusterMs === undefined) {
        const v = await gpuB.request<any>("GET", vsPath);
        if (v.status === 200 && v.body.status?.readyToUse) clusterMs = performance.now() - t0;
      }
      const got = await ok(alice, "getVolumeSnapshot", { params: { volumeId: vol.id, snapshotId: snap.id } });
      if (got.state === "failed") throw new Error(`snapshot failed: ${got.failure}`);
      return got.state === "ready" ? true : undefined;
    }, "the snapshot ready");
    rows.snapApi?.push(performance.now() - t0);
    rows.snapCluster?.push(clusterMs ?? Number.NaN);
    const vs = (await gpuB.request<any>("GET", vsPath)).body;
    const content = (
      await gpuB.request<any>(
        "GET",
        `/apis/snapshot.storage.k8s.io/v1/volumesnapshotcontents/${vs.status.boundVolumeSnapshotContentName}`,
      )
    ).body;
    const handle = content.status.snapshotHandle as string;
    rows.snapPlugin?.push(copied(new RegExp(`snapshot ${handle} of`)));

    const copyDir = f.csi.snapshotPath(handle);
    execFileSync("sync");
    rows.cpSnapshot?.push(timed(() => execFileSync("cp", ["-a", copyDir, `${copyDir}.cp`])));
    rmSync(`${copyDir}.cp`, { recursive: true, force: true });
    execFileSync("sync");

    t0 = performance.now();
    const restored = await ok(alice, "restoreVolumeSnapshot", {
      params: { volumeId: vol.id, snapshotId: snap.id },
      body: { name: `restored-${i}` },
    });
    await until(async () => {
      const v = await ok(alice, "getVolume", { params: { volumeId: restored.id } });
      return v.restoring === false ? true : undefined;
    }, "the volume restored");
    rows.restoreApi?.push(performance.now() - t0);
    rows.restorePlugin?.push(copied(new RegExp(`volume ${NS}/${claimOf(restored.id)} from snapshot`)));

    await ok(alice, "deleteVolumeSnapshot", { params: { volumeId: vol.id, snapshotId: snap.id } });
    await until(
      async () => {
        const r = await call(alice, "getVolumeSnapshot", { params: { volumeId: vol.id, snapshotId: snap.id } });
        return !r.ok && r.status === 404 ? true : undefined;
      },
      "the snapshot deleted",
      120_000,
      200,
    );
    await ok(alice, "deleteVolume", { params: { volumeId: restored.id } });
  }
  gpuB.close();

  const m = Object.fromEntries(Object.entries(rows).map(([k, v]) => [k, lowerMedian(v)])) as Record<string, number>;
  const lines = [
    `storage-snapshots: a 1 GiB volume (1 GiB of random bytes) on ${f.node.name}, ${ROUNDS} round(s), worker snapshot pass every ${INTERVAL} ms; medians`,
    `  snapshot, POST → the API says ready:           ${s(m.snapApi as number)}`,
    `    gpu-b's VolumeSnapshot readyToUse:            ${s(m.snapCluster as number)}`,
    `    the plugin's copy of the folder:              ${s(m.snapPlugin as number)}`,
    `  baseline: cp -a of the volume's folder:        ${s(m.cpVolume as number)}`,
    `  snapshot ×${((m.snapApi as number) / (m.cpVolume as number)).toFixed(2)} the baseline (Berth's path adds ${s((m.snapApi as number) - (m.cpVolume as number))})`,
    `  restore, POST → the API says restored:         ${s(m.restoreApi as number)}`,
    `    the plugin's copy into the new volume:        ${s(m.restorePlugin as number)}`,
    `  baseline: cp -a of the snapshot's copy:        ${s(m.cpSnapshot as number)}`,
    `  restore ×${((m.restoreApi as number) / (m.cpSnapshot as number)).toFixed(2)} the baseline (Berth's path adds ${s((m.restoreApi as number) - (m.cpSnapshot as number))})`,
    `  load average at the end: ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`,
  ];
  console.log(lines.join("\n"));
  console.log(JSON.stringify(rows));
} finally {
  await f.stop();
}
