// biome-ignore-all lint/suspicious/noExplicitAny: probe
// Where the time goes, per session, from POST to Running: timestamps of each stage seen on watches
// (management Sessions, GPU-cluster pods, Postgres reports), N sessions paced at R per second.
//   node bench/src/sessions-probe.ts [N=100] [R=20] [NODES=25]
import { HttpKube, Informer } from "@berth/controllers/kube";
import { ResourcePolicyKind, resourcePath, SessionKind, SessionMirrorKind } from "@berth/crds";
import { gpuNodeManifest, kubeConfigFrom } from "@berth/e2e";
import { adminKube, gpuCluster, H100, MANAGEMENT, startSessionsBed } from "@berth/e2e/sessions";
import { apiAs } from "./api.ts";
import { percentile } from "./kit/percentile.ts";

const N = Number(process.argv[2] ?? "100");
const RATE = Number(process.argv[3] ?? "20");
const NODES = Number(process.argv[4] ?? "25");
const bed = await startSessionsBed({
  fleet: {
    clusters: [MANAGEMENT, gpuCluster("gpu-a", [{ name: "gpu-a-0", gpuModel: H100, gpuCount: 8 }])],
  },
  operatorResyncMs: 60_000,
  operatorDebounceMs: 500,
  workerLease: { durationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 },
});
const gk = adminKube(bed.fleet.cluster("gpu-a"));
for (let i = 1; i < NODES; i++)
  await gk.ensure("/api/v1/nodes", gpuNodeManifest({ name: `gpu-a-${i}`, gpuModel: H100, gpuCount: 8 }));
const mk = adminKube(bed.fleet.cluster("mgmt"));
await mk.json(
  "PATCH",
  resourcePath(ResourcePolicyKind, { name: "global" }),
  { spec: { limits: { maxGpusPerUser: 100_000, maxConcurrentSessionsPerUser: 100_000 } } },
  "application/merge-patch+json",
);
const members = await Promise.all(Array.from({ length: 16 }, () => bed.t.aUser()));
for (const m of members) await bed.t.member(m, bed.org.id, null, "member");
for (;;) {
  const a = await apiAs(bed.t.api.url, bed.superAdmin).call("getGpuAvailability");
  if ((a.models.find((m) => m.gpu_model === H100)?.free ?? 0) >= NODES * 8) break;
  await new Promise((r) => setTimeout(r, 500));
}
await new Promise((r) => setTimeout(r, 6000));

const t = new Map<string, Record<string, number>>();
const mark = (name: string, stage: string) => {
  const rec = t.get(name) ?? {};
  rec[stage] ??= performance.now();
  t.set(name, rec);
};
const ses = new Informer<any>({
  kube: new HttpKube(kubeConfigFrom(bed.fleet.cluster("mgmt").kubeconfig)),
  path: resourcePath(SessionKind),
  onEvent: (e) => {
    if (e.type !== "upsert") return;
    const ph = e.object.status?.phase;
    if (ph) mark(e.object.metadata.name, ph);
  },
});
const pods = new Informer<any>({
  kube: new HttpKube(kubeConfigFrom(bed.fleet.cluster("gpu-a").kubeconfig)),
  path: "/api/v1/namespaces/berth-sessions/pods",
  onEvent: (e) => {
    if (e.type !== "upsert") return;
    mark(e.object.metadata.name, "podCreated");
    if (e.object.spec?.nodeName) mark(e.object.metadata.name, "podBound");
    if (e.object.status?.phase === "Running") mark(e.object.metadata.name, "podRunning");
  },
});
const mirrors = new Informer<any>({
  kube: new HttpKube(kubeConfigFrom(bed.fleet.cluster("gpu-a").kubeconfig)),
  path: resourcePath(SessionMirrorKind, { namespace: "berth-sessions" }),
  onEvent: (e) => e.type === "upsert" && mark(e.object.metadata.name, "mirror"),
});
for (const i of [ses, pods, mirrors]) i.start();
await Promise.all([ses, pods, mirrors].map((i) => i.waitForSync()));

const t0 = performance.now();
await Promise.all(
  Array.from({ length: N }, async (_, i) => {
    await new Promise((r) => setTimeout(r, (i * 1000) / RATE));
    const start = performance.now();
    const member = members[i % members.length] as { token: string };
    const r = await apiAs(bed.t.api.url, member).call("createSession", {
      body: { offering: "h100", preset: "gpu-small", image: "jupyterlab" },
    });
    const name = r.resource_name;
    const rec = t.get(name) ?? {};
    rec.post = start;
    rec.created = performance.now();
    t.set(name, rec);
  }),
);
for (;;) {
  const done = [...t.values()].filter((r) => r.post && r.Running).length;
  if (done >= N) break;
  await new Promise((r) => setTimeout(r, 200));
}
const stages = ["created", "Starting", "mirror", "podCreated", "podBound", "podRunning", "Running"];
const rows = [...t.values()].filter((r) => r.post && r.Running);
let prev = "post";
console.log(
  `N=${N} at ${RATE}/s on ${NODES} nodes, all Running after ${((performance.now() - t0) / 1000).toFixed(1)} s`,
);
for (const s of stages) {
  const d = rows.map((r) => (r[s] ?? NaN) - (r[prev] ?? NaN)).filter((x) => Number.isFinite(x));
  console.log(`${prev} → ${s}: p50 ${percentile(d, 50).toFixed(0)} ms, p99 ${percentile(d, 99).toFixed(0)} ms`);
  prev = s;
}
const total = rows.map((r) => (r.Running ?? 0) - (r.post ?? 0));
console.log(`POST → Running: p50 ${percentile(total, 50).toFixed(0)} ms, p99 ${percentile(total, 99).toFixed(0)} ms`);
console.log(JSON.stringify(bed.worker.controller()?.counts));
for (const i of [ses, pods, mirrors]) await i.stop();
gk.close();
mk.close();
await bed.stop();
process.exit(0);
