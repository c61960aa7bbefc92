// biome-ignore-all lint/suspicious/noExplicitAny: the bench reads Kubernetes JSON as it comes
// Sessions at scale, on the real path: a management cluster and a GPU cluster of 125 kwok nodes × 8 H100
// (1,000 GPUs), Postgres, the API over HTTP, the leader-elected worker, the cluster's operator with the
// mirror controller. Figures, in one run:
//   1. raw: 1,000 one-GPU pods created directly on the GPU cluster's apiserver until all Running;
//   2. dispatch: 1,000 sessions created through POST /api/v1/sessions until every pod is Running on the
//      GPU cluster (and every session Running), with the ratio to (1);
//   2b. the same two halves apart: 1,000 creates with the worker stopped (the API alone), then the worker
//      started on that backlog until every pod and session is Running (placement, dispatch, the operator
//      and the status reports alone), with the ratio to (1); round trips per session for both halves:
//      Postgres statements (all of this process: API, worker, the reports' route), management-cluster
//      writes, GPU-cluster writes;
//   3. steady state with the 1,000 sessions running: writes per second to the management cluster;
//   4. writes to the management cluster per session lifecycle (create → Running → pause → Paused →
//      resume → Running → terminate → Terminated);
//   5. control-plane overhead from POST to phase Running (kwok makes pods ready at once): p50, p99, at a
//      paced rate;
//   6. a burst of 500 creates in 10 s: all accepted or queued, none lost or duplicated.
// Writes are counted from the management apiserver's own apiserver_request_total (mutating verbs).
// Kubernetes' own CPU (apiservers, etcd, controller-manager, scheduler, kwok; their idle use taken off) is
// given per raw pod and per dispatched session: its ratio bounds the dispatch ratio on a CPU-bound machine
// whatever Berth's own processes cost.
//
//   node bench/src/sessions-dispatch.ts [--sessions=1000] [--nodes=125] [--gpus=8] [--concurrency=32]
//                                       [--steady=60] [--lifecycles=50] [--latency=200] [--burst=500]
//                                       [--apart=true] [--profile-apart=<file.cpuprofile>]
//                                       [--profile-dispatch=<file.cpuprofile>] [--split]
//
// By default everything (API, worker, operator, this client) runs in this one Node process on a shared event
// loop, next to the fleet's processes and Postgres on the same machine; say so when you quote the figures.
// With --split the API (api/src/main.ts), the worker (api/src/worker-main.ts) and the GPU cluster's operator
// (operator/src/main.ts) run as separate processes, as deployed (split-processes.ts), and this process is
// only the client; figures this process counted itself (Postgres statements by shape, the worker's counters)
// are then n/a. Both modes print Postgres' own counts (pg_stat_database) and the CPU each process used
// during the dispatch phases (/proc), to tell which process is the bottleneck.
import { writeFileSync } from "node:fs";
import { Session as InspectorSession } from "node:inspector/promises";
import { cpus, loadavg, totalmem } from "node:os";
import { parseArgs } from "node:util";
import type { OperationId, ResponseOf } from "@berth/console/client";
import { DEFAULT_CONTROLLER_OPTIONS, DEFAULT_TIMING } from "@berth/controllers";
import { ResourcePolicyKind, resourcePath, SessionKind, SessionMirrorKind } from "@berth/crds";
import { gpuNodeManifest, type KubeHttp } from "@berth/e2e";
import {
  adminKube,
  gpuCluster,
  H100,
  MANAGEMENT,
  openEventStream,
  type SessionsBed,
  startSessionsBed,
} from "@berth/e2e/sessions";
import { answering, type Retry, retrying } from "./api.ts";
import { follow } from "./follow.ts";
import { percentile } from "./kit/percentile.ts";
import { diff, objects, READING, served, show, total } from "./kube-requests.ts";
import { pgStat, showPg } from "./pg-stat.ts";
import { countStatements, slowest, top } from "./pg-statements.ts";
import { pool } from "./pool.ts";
import { cpuSnapshot, cpuUsed, showCpu } from "./process-cpu.ts";
import { type Split, startSplit } from "./split-processes.ts";

const { values } = parseArgs({
  options: {
    sessions: { type: "string", default: "1000" },
    nodes: { type: "string", default: "125" },
    gpus: { type: "string", default: "8" },
    concurrency: { type: "string", default: "32" },
    steady: { type: "string", default: "60" },
    lifecycles: { type: "string", default: "50" },
    latency: { type: "string", default: "200" },
    burst: { type: "string", default: "500" },
    apart: { type: "string", default: "true" },
    "profile-apart": { type: "string" },
    "profile-dispatch": { type: "string" },
    split: { type: "boolean", default: false },
  },
});
const N = Number(values.sessions);
const NODES = Number(values.nodes);
const GPUS = Number(values.gpus);
const CONC = Number(values.concurrency);
const STEADY_S = Number(values.steady);
const LIFECYCLES = Number(values.lifecycles);
const LATENCY_N = Number(values.latency);
const BURST = Number(values.burst);
const APART = values.apart !== "false";
const SPLIT = values.split === true;

const s2 = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const log = (line: string) => process.stdout.write(`${line}\n`);

// Counted from before the bed starts: everything but the fleet runs in this process.
const { snapshot, waitedSnapshot } = countStatements();

/** CPU seconds of the fleet's own processes (apiservers, etcd, controller-manager, scheduler, kwok). */
const kubeCpuS = (used: Map<string, number>) =>
  [...used].filter(([label]) => /^(kube-|etcd|kwok)/.test(label)).reduce((a, [, v]) => a + v, 0);
/** Starts a CPU profile of this process when a file is given; the answer stops it and writes the file. */
async function startProfile(file: string | undefined): Promise<(() => Promise<void>) | undefined> {
  if (!file) return undefined;
  const inspector = new InspectorSession();
  inspector.connect();
  await inspector.post("Profiler.enable");
  await inspector.post("Profiler.start");
  return async () => {
    const { profile } = await inspector.post("Profiler.stop");
    writeFileSync(file, JSON.stringify(profile));
    inspector.disconnect();
  };
}

/**
 * Waits until these sessions' pods, Services and the Services' Endpoints and EndpointSlices are gone and the
 * worker has marked every one Terminated: a later phase's CPU and writes must not include this cleanup.
 */
async function terminated(gk: KubeHttp, mk: KubeHttp, ids: readonly string[]): Promise<void> {
  const names = new Set(ids.map((x) => x.replace("_", "-")));
  const ns = "/api/v1/namespaces/berth-sessions";
  const named = async (path: string, nameOf = (o: any): string => o.metadata.name) =>
    (await gk.json<{ items: any[] }>("GET", path)).items.filter((o) => names.has(nameOf(o))).length;
  for (;;) {
    const sessions = await mk.json<{ items: any[] }>("GET", resourcePath(SessionKind));
    const left =
      (await named(`${ns}/pods`)) +
      (await named(`${ns}/services`)) +
      (await named(`${ns}/endpoints`)) +
      (await named(
        "/apis/discovery.k8s.io/v1/namespaces/berth-sessions/endpointslices",
        (o) => o.metadata.labels?.["kubernetes.io/service-name"] ?? "",
      )) +
      sessions.items.filter((x) => names.has(x.metadata.name) && x.status?.phase !== "Terminated").length;
    if (left === 0) return;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/**
 * The worker has nothing left to do, seen from outside (the split mode has no controller to ask): two
 * seconds without a management-cluster write other than lease renewals.
 */
async function quiet(mk: KubeHttp, timeoutMs = 120_000): Promise<void> {
  const t0 = performance.now();
  for (;;) {
    const a = await served(mk);
    await new Promise((r) => setTimeout(r, 2_000));
    const d = diff(a, await served(mk));
    d.delete("PUT leases");
    if (total(d) === 0) return;
    if (performance.now() - t0 > timeoutMs) {
      log(`(the worker was still writing after ${timeoutMs / 1000} s; the figures after this include its writes)`);
      return;
    }
  }
}

/** Requests a connection reset may be sent again without doing twice what was asked (with a key, any create). */
const REPEATABLE = new Set<OperationId>([
  "getSession",
  "getGpuAvailability",
  "pauseSession",
  "resumeSession",
  "terminateSession",
  "bulkTerminateSessions",
]);

/**
 * One connection reset under load (the API and the bench share 2 CPUs) threw out of the whole run. Requests
 * safe to repeat are sent again up to 3 times; any other answers status 0, which the figures count apart.
 */
const ONE_RESET: Retry = {
  attempts: 3,
  backoffMs: (n) => 200 * n,
  again: (op, answer, options) => !answer && (REPEATABLE.has(op) || options?.idempotencyKey !== undefined),
  noAnswer: (op, why, n) => log(`no answer to ${op} (${why})${n > 1 ? ` after ${n} tries` : ""}`),
};

async function main(): Promise<void> {
  log(
    `# sessions-dispatch: ${N} sessions, GPU cluster ${NODES} nodes × ${GPUS} H100, client concurrency ${CONC}; ${SPLIT ? "split: API, worker and operator as separate processes" : "in-process: API, worker, operator and client in this process"}`,
  );
  log(
    `machine: ${cpus().length} CPUs, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, load ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}`,
  );
  const t0 = performance.now();
  const bed: SessionsBed = await startSessionsBed({
    fleet: {
      clusters: [MANAGEMENT, gpuCluster("gpu-a", [{ name: "gpu-a-0", gpuModel: H100, gpuCount: GPUS }])],
    },
    operatorResyncMs: 60_000,
    operatorDebounceMs: 500,
    // Production lifecycle timings (the journeys shorten them): a pod waits 60 s for a node before the
    // session looks elsewhere, which a loaded machine's scheduler may need.
    // The worker's own production periods too (the journeys poll every 500 ms and resync every 10 s).
    worker: {
      timing: DEFAULT_TIMING,
      pollMs: DEFAULT_CONTROLLER_OPTIONS.pollMs,
      resyncMs: DEFAULT_CONTROLLER_OPTIONS.resyncMs,
    },
    // Production timings: the lease is renewed every 2 s (a write each), not every 250 ms as in tests.
    workerLease: { durationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 },
  });
  const gpuA = bed.fleet.cluster("gpu-a");
  const mgmt = bed.fleet.cluster("mgmt");
  const gk = adminKube(gpuA);
  const mk = adminKube(mgmt);
  let split: Split | undefined;
  if (SPLIT) {
    try {
      split = await startSplit(bed, {
        gpuCluster: "gpu-a",
        onSignal: async () => {
          gk.close();
          mk.close();
          await bed.stop();
        },
      });
      await split.reissueTokens([bed.superAdmin, bed.orgAdmin, bed.alice, bed.bob]);
    } catch (err) {
      gk.close();
      mk.close();
      await bed.stop();
      throw err;
    }
    log(
      `split: api pid ${split.api.pid} (${split.apiUrl}), worker pid ${split.worker?.pid}, operator pid ${split.operator.pid}`,
    );
  }
  const apiUrl = split ? split.apiUrl : bed.t.api.url;
  // No bound of its own on a request (10 minutes): a slow answer is a figure here, not a failure.
  const call = retrying(
    answering(() => apiUrl, 600_000),
    ONE_RESET,
  );
  const waitFor = async (
    user: { token: string },
    sessionId: string,
    pred: (s: ResponseOf<"getSession">) => boolean,
    what: string,
    timeoutMs = 30_000,
  ) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const r = await call(user, "getSession", { params: { sessionId } });
      if (r.ok && r.status === 200 && pred(r.body)) return r.body;
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(r).slice(0, 1500)}`);
      await new Promise((res) => setTimeout(res, 100));
    }
  };
  /** CPU by process: this one, the split children, each cluster's apiserver, the rest by command name. */
  const apiserverPort = new Map(
    bed.fleet.clusters.map((c) => [new URL(c.server).port, `kube-apiserver ${c.name}`] as const),
  );
  const cpu = () =>
    cpuSnapshot((pid, comm, cmd) => {
      if (pid === process.pid) return split ? "bench client" : "bench (API, worker, operator, client)";
      const child = split?.children().find((c) => c.pid === pid);
      if (child) return child.name.startsWith("worker") ? "worker" : child.name;
      if (comm === "kube-apiserver") return apiserverPort.get(/--secure-port[= ](\d+)/.exec(cmd)?.[1] ?? "") ?? comm;
      if (comm.startsWith("postgres")) return "postgres";
      return undefined;
    });
  /**
   * When each session reached each stage on its way (mirror: placed, and the worker wrote it to the GPU
   * cluster; pod: the operator created it), to tell which part is slow. A placement itself is recorded in
   * Postgres only (Starting is kept off the resource), just before its mirror.
   */
  const stages = () => {
    const mirrors = follow(
      gpuA.kubeconfig,
      resourcePath(SessionMirrorKind, { namespace: "berth-sessions" }),
      () => true,
    );
    const pods = follow(gpuA.kubeconfig, "/api/v1/namespaces/berth-sessions/pods", () => true);
    const last = (seen: Map<string, number>, t0: number, names: Set<string>) =>
      s2(Math.max(0, ...[...seen].filter(([k]) => names.has(k)).map(([, t]) => t - t0)));
    return {
      summary: (t0: number, names: Set<string>) =>
        `last mirror written at ${last(mirrors.seen, t0, names)}, last pod created at ${last(pods.seen, t0, names)}`,
      stop: async () => {
        await mirrors.stop();
        await pods.stop();
      },
    };
  };
  try {
    // Nodes: the rest of the 125, created directly (startFleet's readiness wait is per start, not per node).
    await pool(
      Array.from({ length: NODES - 1 }, (_, i) => i + 1),
      16,
      async (i) => {
        await gk.ensure("/api/v1/nodes", gpuNodeManifest({ name: `gpu-a-${i}`, gpuModel: H100, gpuCount: GPUS }));
      },
    );
    const nodesReady = follow(
      gpuA.kubeconfig,
      "/api/v1/nodes",
      (n) =>
        n.status?.conditions?.some((c: any) => c.type === "Ready" && c.status === "True") &&
        !n.spec?.taints?.some((t: any) => t.key.startsWith("node.kubernetes.io/not-ready")),
    );
    await nodesReady.until(NODES, 300_000);
    await nodesReady.stop();
    // The worker must see the whole inventory: wait for the API's availability to show it.
    for (;;) {
      const a = await call(bed.superAdmin, "getGpuAvailability");
      if (a.ok && (a.body.models.find((m) => m.gpu_model === H100)?.free ?? 0) >= NODES * GPUS) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    // The default policy allows 4 sessions per user: the bench lifts it (an administrator's edit).
    await mk.json(
      "PATCH",
      resourcePath(ResourcePolicyKind, { name: "global" }),
      { spec: { limits: { maxGpusPerUser: 100_000, maxConcurrentSessionsPerUser: 100_000 } } },
      "application/merge-patch+json",
    );
    await new Promise((r) => setTimeout(r, 6_000)); // the API's catalog cache (5 s)
    // Many users, as a real fleet has: the per-user lock that makes quota checks exact serializes one
    // user's creates, not everyone's.
    const members = await Promise.all(Array.from({ length: CONC }, () => bed.t.aUser()));
    for (const m of members) await bed.t.member(m, bed.org.id, null, "member");
    await split?.reissueTokens(members);
    log(`bed ready in ${s2(performance.now() - t0)}`);
    /** N H100 sessions created through the API by the members in turn, CONC at a time; the ids of those accepted. */
    const createSessions = async (statuses?: Map<number, number>): Promise<string[]> => {
      const ids: string[] = [];
      await pool(
        Array.from({ length: N }, (_, i) => i),
        CONC,
        async (i) => {
          const r = await call(members[i % members.length] as { token: string }, "createSession", {
            body: { offering: "h100", preset: "gpu-small", image: "jupyterlab" },
          });
          statuses?.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          if (r.ok && r.status === 201) ids.push(r.body.id);
        },
      );
      return ids;
    };

    // 1. Raw pods on the GPU cluster.
    await gk.ensure("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: "raw" } });
    const rawWatch = follow(gpuA.kubeconfig, "/api/v1/namespaces/raw/pods", (p) => p.status?.phase === "Running");
    await new Promise((r) => setTimeout(r, 500)); // synced
    // The fleet's background work (node heartbeats, leases) runs whatever we do: measured idle, taken off
    // the per-pod and per-session figures of Kubernetes' CPU below.
    const idle0 = cpu();
    await new Promise((r) => setTimeout(r, 5_000));
    const kubeIdlePerS = kubeCpuS(cpuUsed(idle0, cpu())) / 5;
    const rawCpu0 = cpu();
    const raw0 = performance.now();
    const rawPods = Array.from({ length: N }, (_, i) => i);
    const rawCreate = pool(rawPods, CONC, async (i) => {
      await gk.json("POST", "/api/v1/namespaces/raw/pods", {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: `raw-${i}` },
        spec: {
          nodeSelector: { "nvidia.com/gpu.product": H100 },
          tolerations: [{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }],
          containers: [{ name: "c", image: "x", resources: { limits: { "nvidia.com/gpu": "1" } } }],
        },
      });
    });
    const rawRunning = rawWatch.until(N, 300_000);
    await rawCreate;
    const rawCreatedMs = performance.now() - raw0;
    await rawRunning;
    const rawMs = performance.now() - raw0;
    const rawCpu = cpuUsed(rawCpu0, cpu());
    const kubeMsPerPod = ((kubeCpuS(rawCpu) - (kubeIdlePerS * rawMs) / 1000) * 1000) / N;
    log(
      `raw pods: ${N} created in ${s2(rawCreatedMs)}, all Running in ${s2(rawMs)} → ${(N / (rawMs / 1000)).toFixed(0)} pods/s`,
    );
    log(
      `  CPU during raw pods: ${[...rawCpu.values()].reduce((a, b) => a + b, 0).toFixed(1)} s of ${((cpus().length * rawMs) / 1000).toFixed(1)} s the machine has; Kubernetes' own (apiservers, etcd, controller-manager, scheduler, kwok): ${kubeMsPerPod.toFixed(1)} ms per pod, beyond ${(kubeIdlePerS * 100).toFixed(0)} % of a core it uses idle`,
    );
    await rawWatch.stop();
    await gk.json("DELETE", "/api/v1/namespaces/raw/pods?gracePeriodSeconds=0");
    for (;;) {
      const left = await gk.json<{ items: unknown[] }>("GET", "/api/v1/namespaces/raw/pods");
      if (left.items.length === 0) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    for (;;) {
      const a = await call(bed.superAdmin, "getGpuAvailability");
      if (a.ok && (a.body.models.find((m) => m.gpu_model === H100)?.free ?? 0) >= NODES * GPUS) break;
      await new Promise((r) => setTimeout(r, 250));
    }

    // 2. Dispatch through the API.
    let worker = bed.worker;
    const idle = async () => {
      if (split) await quiet(mk);
      else await worker.controller()?.idle();
    };
    const pgBefore = await pgStat(bed.t.database.db);
    const before = await served(mk);
    const gBefore = await served(gk);
    const qBefore = snapshot();
    const wBefore = waitedSnapshot();
    const podWatch = follow(
      gpuA.kubeconfig,
      "/api/v1/namespaces/berth-sessions/pods",
      (p) => p.status?.phase === "Running",
    );
    const sesWatch = follow(mgmt.kubeconfig, resourcePath(SessionKind), (x) => x.status?.phase === "Running");
    const stages1 = stages();
    await new Promise((r) => setTimeout(r, 500)); // synced
    // This process's CPU while creates and dispatch run together.
    const dispatchProfile = await startProfile(values["profile-dispatch"]);
    const statuses = new Map<number, number>();
    const cpu0 = cpu();
    const d0 = performance.now();
    const creating = createSessions(statuses);
    const podsRunning = podWatch.until(N, 600_000);
    const created = await creating;
    const acceptedMs = performance.now() - d0;
    await podsRunning;
    const podsMs = performance.now() - d0;
    await sesWatch.until(N, 600_000);
    const sessionsMs = performance.now() - d0;
    const cpu1 = cpu();
    await dispatchProfile?.();
    await podWatch.stop();
    await sesWatch.stop();
    const stages1Line = stages1.summary(d0, new Set(created.map((x) => x.replace("_", "-"))));
    await stages1.stop();
    const dispatchWrites = diff(before, await served(mk));
    const dispatchGpuWrites = diff(gBefore, await served(gk));
    const dispatchStatements = diff(qBefore, snapshot());
    const dispatchWaited = diff(wBefore, waitedSnapshot());
    log(
      `dispatch: ${N} POSTs answered in ${s2(acceptedMs)} (${[...statuses].map(([k, v]) => `${v}×${k}`).join(", ")}), all pods Running in ${s2(podsMs)} → ${(N / (podsMs / 1000)).toFixed(0)} sessions/s; all sessions Running in ${s2(sessionsMs)} → ${(N / (sessionsMs / 1000)).toFixed(0)}/s`,
    );
    log(
      `ratio to raw pods (pods Running): ${(rawMs / podsMs).toFixed(2)}; (sessions Running): ${(rawMs / sessionsMs).toFixed(2)}`,
    );
    log(
      `create rate: ${(N / (acceptedMs / 1000)).toFixed(0)} POSTs/s answered; the last pod was Running ${s2(podsMs - acceptedMs)} after the last answer; ${stages1Line}`,
    );
    log(
      `management writes during dispatch: ${total(dispatchWrites)} (${(total(dispatchWrites) / N).toFixed(1)} per session): ${show(dispatchWrites)}`,
    );
    log(
      `GPU-cluster writes during dispatch: ${(total(dispatchGpuWrites) / N).toFixed(1)} per session, of the sessions' objects ${(total(objects(dispatchGpuWrites)) / N).toFixed(2)} (no leases, nodes or Events; 409s included): ${show(dispatchGpuWrites)}`,
    );
    if (split) log("Postgres statements during dispatch: n/a (split: counted in-process only)");
    else {
      log(
        `Postgres statements during dispatch: ${(total(dispatchStatements) / N).toFixed(1)} per session; most: ${top(dispatchStatements, N)}`,
      );
      log(`  waited on longest: ${slowest(dispatchWaited, dispatchStatements)}`);
    }
    log(`Postgres during dispatch, per session: ${showPg(pgBefore, await pgStat(bed.t.database.db), N)}`);
    log(`CPU during dispatch (${s2(sessionsMs)} wall): ${showCpu(cpu0, cpu1, sessionsMs)}`);

    // 3. Steady state: once the worker has nothing left to do (Kubernetes Events are recorded
    // asynchronously and may trail the phases by a few seconds under load).
    await idle();
    const s0 = await served(mk);
    await new Promise((r) => setTimeout(r, STEADY_S * 1000));
    const steady = diff(s0, await served(mk));
    log(
      `steady state, ${N} sessions Running, ${STEADY_S} s: ${total(steady)} writes → ${(total(steady) / STEADY_S).toFixed(2)} writes/s (${show(steady) || "none"})`,
    );

    // Clean up for the next figures: terminate all (bulk, 100 per call), until the worker is done.
    for (let i = 0; i < created.length; i += 100)
      await call(bed.superAdmin, "bulkTerminateSessions", { body: { ids: created.slice(i, i + 100) } });
    await terminated(gk, mk, created);
    await idle();

    // 2b. Create and dispatch apart: the creates with the worker stopped, then the worker on the backlog.
    if (APART) {
      if (split) await split.stopWorker();
      else await worker.stop();
      const qc0 = snapshot();
      const wc0 = waitedSnapshot();
      const mc0 = await served(mk);
      const c0 = performance.now();
      const backlog = await createSessions();
      const createMs = performance.now() - c0;
      const createStatements = diff(qc0, snapshot());
      const createWaited = diff(wc0, waitedSnapshot());
      const createWrites = diff(mc0, await served(mk));
      log(
        `create alone (worker stopped): ${backlog.length} of ${N} accepted in ${s2(createMs)} → ${(backlog.length / (createMs / 1000)).toFixed(0)} creates/s; per create: ${(total(createWrites) / N).toFixed(1)} management writes, ${split ? "n/a (split)" : (total(createStatements) / N).toFixed(1)} Postgres statements${split ? "" : `; most: ${top(createStatements, N)}`}`,
      );
      if (!split) log(`  waited on longest: ${slowest(createWaited, createStatements)}`);
      const names = new Set(backlog.map((x) => x.replace("_", "-")));
      const mine = (name: string) => names.has(name);
      const pods2 = follow(
        gpuA.kubeconfig,
        "/api/v1/namespaces/berth-sessions/pods",
        (p) => p.status?.phase === "Running",
      );
      const ses2 = follow(mgmt.kubeconfig, resourcePath(SessionKind), (x) => x.status?.phase === "Running");
      // No stage watches here (unlike the first dispatch): three more watchers would add to the
      // apiservers' CPU that the ceiling below is computed from.
      await new Promise((r) => setTimeout(r, 500)); // synced
      const pd0 = await pgStat(bed.t.database.db);
      const qd0 = snapshot();
      const wd0 = waitedSnapshot();
      const md0 = await served(mk);
      const gd0 = await served(gk);
      const mr0 = await served(mk, READING);
      const gr0 = await served(gk, READING);
      // This process's CPU during the dispatch alone (API, worker, operator and this client share it).
      const apartProfile = await startProfile(values["profile-apart"]);
      let cpu2 = cpu();
      let w0 = performance.now();
      if (split) {
        // From the moment the process has loaded its modules and campaigns, as an in-process start.
        const w = await split.startWorker("worker-bench");
        log(`  (the worker process loaded in ${s2(performance.now() - w0)}; timings below from then)`);
        cpu2 = cpu();
        w0 = performance.now();
        await w.line("session controller started", 120_000);
      } else {
        worker = await bed.startWorker("worker-bench");
        await worker.leading(60_000);
      }
      const leadMs = performance.now() - w0;
      await pods2.until(backlog.length, 600_000, mine);
      const podsMs2 = performance.now() - w0;
      await ses2.until(backlog.length, 600_000, mine);
      const sessionsMs2 = performance.now() - w0;
      const cpu3 = cpu();
      await pods2.stop();
      await ses2.stop();
      await apartProfile?.();
      await idle();
      const dStatements = diff(qd0, snapshot());
      const dWaited = diff(wd0, waitedSnapshot());
      const dWrites = diff(md0, await served(mk));
      const dGpu = diff(gd0, await served(gk));
      const dReads = diff(mr0, await served(mk, READING));
      const dGpuReads = diff(gr0, await served(gk, READING));
      const n = backlog.length;
      log(
        `dispatch alone (a backlog of ${n}, from the worker's start; leading after ${s2(leadMs)}): all pods Running in ${s2(podsMs2)} → ${(n / (podsMs2 / 1000)).toFixed(0)} sessions/s; all sessions Running in ${s2(sessionsMs2)} → ${(n / (sessionsMs2 / 1000)).toFixed(0)}/s; ratio to raw pods ${(rawMs / ((podsMs2 * N) / n)).toFixed(2)} (pods), ${(rawMs / ((sessionsMs2 * N) / n)).toFixed(2)} (sessions)`,
      );
      log(
        `  per dispatched session: ${(total(dWrites) / n).toFixed(1)} management writes (${show(dWrites)}); ${(total(dGpu) / n).toFixed(1)} GPU-cluster writes, ${(total(objects(dGpu)) / n).toFixed(2)} of the sessions' objects (${show(dGpu)}); ${split ? "n/a (split)" : (total(dStatements) / n).toFixed(1)} Postgres statements${split ? "" : `; most: ${top(dStatements, n, 12)}`}`,
      );
      log(
        `  reads per dispatched session (the bench's own watches included): management ${(total(dReads) / n).toFixed(2)} (${show(dReads)}); GPU cluster ${(total(dGpuReads) / n).toFixed(2)} (${show(dGpuReads)})`,
      );
      if (!split) log(`  waited on longest: ${slowest(dWaited, dStatements)}`);
      log(`  Postgres per dispatched session: ${showPg(pd0, await pgStat(bed.t.database.db), n)}`);
      log(`  CPU during dispatch alone (${s2(sessionsMs2)} wall): ${showCpu(cpu2, cpu3, sessionsMs2)}`);
      // What the Kubernetes side of a session costs, against a raw pod's: with the machine's CPUs
      // saturated, the ratio to raw cannot exceed this even if Berth's processes and Postgres cost nothing.
      const kubeMsPerSession = ((kubeCpuS(cpuUsed(cpu2, cpu3)) - (kubeIdlePerS * sessionsMs2) / 1000) * 1000) / n;
      const ceiling = ((cpus().length - kubeIdlePerS) * 1000) / kubeMsPerSession;
      log(
        `  Kubernetes' own CPU per dispatched session: ${kubeMsPerSession.toFixed(1)} ms (a raw pod: ${kubeMsPerPod.toFixed(1)} ms, ×${(kubeMsPerSession / kubeMsPerPod).toFixed(1)}); on ${cpus().length} CPUs that alone allows at most ${ceiling.toFixed(0)} sessions/s, ${(ceiling / (N / (rawMs / 1000))).toFixed(2)} of the raw rate`,
      );
      for (let i = 0; i < backlog.length; i += 100)
        await call(bed.superAdmin, "bulkTerminateSessions", { body: { ids: backlog.slice(i, i + 100) } });
      await terminated(gk, mk, backlog);
      await idle();
    }

    // 4. Writes per lifecycle.
    const l0 = await served(mk);
    const lt0 = performance.now();
    await pool(
      Array.from({ length: LIFECYCLES }, (_, i) => i),
      16,
      async (i) => {
        // Keyed, so that a create a reset cut off is sent again, not made twice (the writes are counted).
        const made = await call(
          bed.bob,
          "createSession",
          { body: { offering: "h100", preset: "gpu-small", image: "jupyterlab" } },
          { idempotencyKey: `lifecycle-${i}` },
        );
        if (!made.ok || made.status !== 201) throw new Error(`a lifecycle's create answered ${made.status}`);
        const id = made.body.id;
        const params = { sessionId: id };
        await waitFor(bed.bob, id, (s) => s.phase === "Running", "Running", 120_000);
        await call(bed.bob, "pauseSession", { params });
        await waitFor(bed.bob, id, (s) => s.phase === "Paused", "Paused", 120_000);
        await call(bed.bob, "resumeSession", { params });
        await waitFor(bed.bob, id, (s) => s.phase === "Running", "Running again", 120_000);
        await call(bed.bob, "terminateSession", { params });
        await waitFor(bed.bob, id, (s) => s.phase === "Terminated", "Terminated", 120_000);
      },
    );
    const lifeMs = performance.now() - lt0;
    const life = diff(l0, await served(mk));
    const leaseRate = (steady.get("PUT leases") ?? 0) / STEADY_S;
    const lifeNet = total(life) - leaseRate * (lifeMs / 1000);
    // The controllers' part: status writes and Events (the rest are the person's create and three actions).
    const lifeControllers = [...life].filter(([k]) => k.endsWith(" sessions/status") || k.endsWith(" events"));
    log(
      `lifecycle (create → Running → pause → Paused → resume → Running → terminate → Terminated) × ${LIFECYCLES}: ${(lifeNet / LIFECYCLES).toFixed(1)} writes per session (lease renewals subtracted), ${(lifeControllers.reduce((a, [, v]) => a + v, 0) / LIFECYCLES).toFixed(1)} of them status writes and Events: ${show(life)}`,
    );

    // 5. Overhead from POST to Running, paced, observed on the event stream (one connection): at 2/s
    // (below what the machine sustains: the control plane's own latency) and at 20/s.
    const latIds: string[] = [];
    for (const rate of [2, 20]) {
      const n = rate === 2 ? Math.min(40, LATENCY_N) : LATENCY_N;
      const stream = await openEventStream(`${apiUrl}/api/v1/sessions/events`, bed.orgAdmin.token);
      const lat: number[] = [];
      const p0 = performance.now();
      await Promise.all(
        Array.from({ length: n }, async (_, i) => {
          await new Promise((r) => setTimeout(r, (i * 1000) / rate));
          const start = performance.now();
          const r = await call(bed.orgAdmin, "createSession", {
            body: { offering: "h100", preset: "gpu-small", image: "jupyterlab" },
          });
          if (!r.ok || r.status !== 201) return; // counted by the log line no_answer writes
          latIds.push(r.body.id);
          await stream.waitFor(
            (e) => e.data?.session_id === r.body.id && e.data.session.phase === "Running",
            `${r.body.id} Running`,
            300_000,
          );
          lat.push(performance.now() - start);
        }),
      );
      await stream.close();
      log(
        `overhead POST → Running at ${rate}/s, ${n} sessions (seen on the SSE stream): p50 ${percentile(lat, 50).toFixed(0)} ms, p99 ${percentile(lat, 99).toFixed(0)} ms, max ${Math.max(...lat).toFixed(0)} ms (${s2(performance.now() - p0)})`,
      );
    }
    for (let i = 0; i < latIds.length; i += 100)
      await call(bed.orgAdmin, "bulkTerminateSessions", { body: { ids: latIds.slice(i, i + 100) } });

    // 6. A burst of 500 in 10 s, across several users, each with an Idempotency-Key.
    const users = members;
    const burstIds: string[] = [];
    const burstStatus = new Map<number, number>();
    const b0 = performance.now();
    await Promise.all(
      Array.from({ length: BURST }, async (_, i) => {
        await new Promise((r) => setTimeout(r, (i * 10_000) / BURST));
        const u = users[i % users.length];
        const r = await call(
          u as { token: string },
          "createSession",
          { body: { offering: "h100", preset: "gpu-small", image: "jupyterlab", name: `burst-${i}` } },
          { idempotencyKey: `burst-${i}` },
        );
        burstStatus.set(r.status, (burstStatus.get(r.status) ?? 0) + 1);
        if (r.ok && r.status === 201) burstIds.push(r.body.id);
      }),
    );
    const burstSent = performance.now() - b0;
    const burstSet = new Set(burstIds.map((x) => x.replace("_", "-")));
    const settledWatch = follow(mgmt.kubeconfig, resourcePath(SessionKind), (x) =>
      ["Running", "Queued"].includes(x.status?.phase),
    );
    await settledWatch.until(burstIds.length, 300_000, (name) => burstSet.has(name));
    await settledWatch.stop();
    const pods = (await gk.json<{ items: any[] }>("GET", "/api/v1/namespaces/berth-sessions/pods")).items.filter(
      (p) => !p.metadata.deletionTimestamp,
    );
    const podNames = pods.map((p) => p.metadata.name);
    const burstCrs = (await mk.json<{ items: any[] }>("GET", resourcePath(SessionKind))).items.filter((s) =>
      burstIds.includes(s.metadata.name.replace("-", "_")),
    );
    const byPhase = new Map<string, number>();
    for (const s of burstCrs) byPhase.set(s.status?.phase, (byPhase.get(s.status?.phase) ?? 0) + 1);
    log(
      `burst: ${BURST} creates sent over 10 s, the last answered at ${s2(burstSent)} (${[...burstStatus].map(([k, v]) => `${v}×${k}`).join(", ")}); ${burstCrs.length} sessions exist (${[...byPhase].map(([k, v]) => `${v} ${k}`).join(", ")}), all settled in ${s2(performance.now() - b0)}; pods ${podNames.length}, duplicated names ${podNames.length - new Set(podNames).size}; lost ${burstIds.length - burstCrs.length}`,
    );
    log(
      `client limits: API→management and worker→clusters: no client-side QPS limiter, 64 keep-alive connections per apiserver; operator: no limiter; kube-scheduler --kube-api-qps=500 --kube-api-burst=1000; this client ${CONC} concurrent HTTP requests`,
    );
    const c = split ? undefined : worker.controller();
    if (c) log(`worker counters: ${JSON.stringify(c.counts)}`);
    log(
      `load at the end: ${loadavg()
        .map((x) => x.toFixed(1))
        .join(" ")}`,
    );
  } finally {
    await split?.stop();
    gk.close();
    mk.close();
    await bed.stop();
  }
}

await main();
process.exit(0);
