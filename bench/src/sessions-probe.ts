// biome-ignore-all lint/suspicious/noExplicitAny: probe
// Where does time go between a pod Running and its session Running? Timestamps per leg, 50 sessions.
import { adminKube, H100, startSessionsBed } from "../../e2e/src/sessions/harness.ts";

const N = Number(process.argv[2] ?? "50");
const bed = await startSessionsBed({
  fleet: {
    clusters: [
      { name: "mgmt", kind: "management" },
      {
        name: "gpu-a",
        kind: "gpu",
        nodes: Array.from({ length: 8 }, (_, i) => ({ name: `gpu-a-${i}`, gpuModel: H100, gpuCount: 8 })),
        gpuRuntimeClass: true,
        gpuDevicePlugin: true,
      },
    ],
  },
  operatorResyncMs: 60_000,
  workerLease: { durationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 },
});
const mk = adminKube(bed.fleet.cluster("mgmt"));
await mk.json(
  "PATCH",
  "/apis/berth.dev/v1alpha1/resourcepolicies/global",
  { spec: { limits: { maxGpusPerUser: 100_000, maxConcurrentSessionsPerUser: 100_000 } } },
  "application/merge-patch+json",
);
await new Promise((r) => setTimeout(r, 6000));
const gk = adminKube(bed.fleet.cluster("gpu-a"));
const t0 = Date.now();
const ids: string[] = [];
await Promise.all(
  Array.from({ length: N }, async () =>
    ids.push(
      (
        await bed.call(bed.alice, "POST", "/api/v1/sessions", {
          offering: "h100",
          preset: "gpu-small",
          image: "jupyterlab",
        })
      ).body.id,
    ),
  ),
);
const tPost = Date.now() - t0;
console.log("posts", tPost);
const podAt = new Map<string, number>();
const sesAt = new Map<string, number>();
for (;;) {
  const pods = await gk.json<{ items: any[] }>("GET", "/api/v1/namespaces/berth-sessions/pods");
  for (const p of pods.items)
    if (p.status?.phase === "Running" && !podAt.has(p.metadata.name)) podAt.set(p.metadata.name, Date.now() - t0);
  const ses = await mk.json<{ items: any[] }>("GET", "/apis/berth.dev/v1alpha1/sessions");
  for (const s of ses.items)
    if (s.status?.phase === "Running" && !sesAt.has(s.metadata.name)) sesAt.set(s.metadata.name, Date.now() - t0);
  if (sesAt.size >= N) break;
  if ((Date.now() - t0) % 2000 < 60) {
    const phases = new Map<string, number>();
    for (const x of ses.items) phases.set(x.status?.phase, (phases.get(x.status?.phase) ?? 0) + 1);
    console.log(Date.now() - t0, "pods running", podAt.size, "sessions", [...phases], "posts", ids.length);
  }
  await new Promise((r) => setTimeout(r, 50));
}
const rows = await bed.t.database
  .db("session_status_reports")
  .where({ phase: "Running" })
  .select("session", "received_at", "at");
const rep = new Map(rows.map((r: any) => [r.session.replace("_", "-"), new Date(r.received_at).getTime() - t0]));
const lines = [...sesAt.keys()].map((k) => [k.slice(-6), podAt.get(k), rep.get(k), sesAt.get(k)]);
lines.sort((a: any, b: any) => a[3] - b[3]);
console.log(`posts done ${tPost} ms`);
for (const l of lines.slice(0, 5).concat(lines.slice(-5))) console.log(l.join("\t"));
const ev = await mk.json<{ items: any[] }>("GET", "/api/v1/events?fieldSelector=involvedObject.kind=Session");
const reasons = new Map<string, number>();
for (const e of ev.items) reasons.set(e.reason, (reasons.get(e.reason) ?? 0) + 1);
console.log([...reasons]);
console.log(JSON.stringify(bed.worker.controller()?.counts));
gk.close();
mk.close();
await bed.stop();
process.exit(0);
