// The build cluster's side of image builds (docs/dev/images.md): ImageBuild resources (written by the
// control plane into the builds namespace) become a ConfigMap and a Job (builds/manifests.ts); the Job's
// pod log is followed (`follow=true`, one stream per running build) and sent in batches; what the Job
// does is reported as levels (Pending with the Job's creation, Running, Succeeded, Failed). Deleting an
// ImageBuild is the cancel: its Job and ConfigMap are deleted (and a Job whose ImageBuild is gone is
// deleted on every resync, should the deletion have happened while no operator was leading).
//
// Order that the control plane relies on: the last log lines (with the builder's digest line) are sent
// before Succeeded is reported, so the digest is stored when the worker checks the registry.
import type { Readable } from "node:stream";
import { buildResourceName } from "@berth/crds";
import { type BuildStatusReport, LogCursor } from "@berth/crds/internal-plane";
import type { Logger } from "pino";
import { type KubeApi, serverSideApply } from "../kube/client.ts";
import { errInfo } from "../kube/errors.ts";
import { Informer, type KubeObject } from "../kube/informer.ts";
import { WorkQueue } from "../kube/workqueue.ts";
import {
  BUILD_LABEL,
  BUILD_POLICY,
  BUILD_SELECTOR,
  type BuildNodeSelector,
  buildConfigMap,
  buildJob,
  buildNetworkPolicy,
} from "./manifests.ts";

export type BuildReport = BuildStatusReport["reports"][number];
export interface BuildLogLine {
  at: string;
  text: string;
}

export interface BuildControllerDeps {
  /** The build cluster (the operator's own client). */
  kube: KubeApi & {
    stream?(path: string, opts: { query?: Record<string, string>; signal?: AbortSignal }): Promise<Readable>;
  };
  clusterId: string;
  /** The builds namespace (made by the operator's install). Default `berth-builds`. */
  namespace?: string;
  /** The build nodes' labels; unset: any node without GPUs (manifests.ts buildJob). */
  nodeSelector?: BuildNodeSelector;
  log: Logger;
  /** Sends status reports; throws when the control plane did not take them (retried). */
  reportStatus(reports: BuildReport[]): Promise<void>;
  /** Sends log lines of one build, in order; throws when the control plane did not take them (retried). */
  sendLogs(buildId: string, lines: BuildLogLine[]): Promise<void>;
  options?: { resyncMs?: number; flushMs?: number };
}

export interface RunningBuildController {
  readonly synced: boolean;
  readonly counts: { jobCreates: number; jobDeletes: number; reports: number; logBatches: number; streams: number };
  stop(): Promise<void>;
}

const FIELD_MANAGER = "berth-operator-builds";
const MAX_BATCH = 500;

interface Build extends KubeObject {
  metadata: KubeObject["metadata"] & { name: string; uid?: string; deletionTimestamp?: string };
  spec: {
    buildId: string;
    cluster: string;
    dockerfile: string;
    destination: string;
    baseImage?: string;
    insecureRegistry: boolean;
    pushSecret?: string;
    builderImage: string;
    timeoutSeconds: number;
    egressCidrs: string[];
  };
}
interface Job extends KubeObject {
  metadata: KubeObject["metadata"] & { name: string; creationTimestamp?: string; labels?: Record<string, string> };
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}
interface Pod extends KubeObject {
  metadata: KubeObject["metadata"] & { name: string; creationTimestamp?: string; labels?: Record<string, string> };
  status?: { phase?: string };
}

/** One followed log: its stream, the lines not sent yet, and where the sent ones end. */
interface Follower {
  pod: string;
  abort: AbortController;
  cursor: LogCursor;
  pending: BuildLogLine[];
  running: Promise<void>;
  flushing: Promise<void> | undefined;
  timer: NodeJS.Timeout | undefined;
}

export function startImageBuildController(deps: BuildControllerDeps): RunningBuildController {
  const ns = deps.namespace ?? "berth-builds";
  const resyncMs = deps.options?.resyncMs ?? 30_000;
  const flushMs = deps.options?.flushMs ?? 200;
  const log = deps.log.child({ controller: "image-builds", cluster: deps.clusterId });
  const counts = { jobCreates: 0, jobDeletes: 0, reports: 0, logBatches: 0, streams: 0 };
  const reported = new Map<string, string>();
  const followers = new Map<string, Follower>();
  const finished = new Set<string>();
  let policy = "";
  let stopped = false;

  const queue = new WorkQueue({
    concurrency: 4,
    process: async (name) => {
      await reconcile(name);
      return undefined;
    },
    onError: (key, err, attempt) =>
      log.warn({ build: key, attempt, error: errInfo(err) }, "reconciling an image build failed; retrying"),
  });
  const enqueue = (o: { metadata?: { name?: string; labels?: Record<string, string> } }, byLabel: boolean) => {
    const name = byLabel ? jobNameOf(o) : o.metadata?.name;
    if (name) queue.add(name);
  };
  const builds = new Informer<Build>({
    kube: deps.kube,
    path: `/apis/berth.dev/v1alpha1/namespaces/${ns}/imagebuilds`,
    onEvent: (e) => enqueue(e.object, false),
    onError: (err, what) => log.warn({ error: errInfo(err) }, `image builds: ${what}`),
  });
  const jobs = new Informer<Job>({
    kube: deps.kube,
    path: `/apis/batch/v1/namespaces/${ns}/jobs`,
    labelSelector: BUILD_SELECTOR,
    onEvent: (e) => enqueue(e.object, true),
    onError: (err, what) => log.warn({ error: errInfo(err) }, `build jobs: ${what}`),
  });
  const pods = new Informer<Pod>({
    kube: deps.kube,
    path: `/api/v1/namespaces/${ns}/pods`,
    labelSelector: BUILD_SELECTOR,
    onEvent: (e) => enqueue(e.object, true),
    onError: (err, what) => log.warn({ error: errInfo(err) }, `build pods: ${what}`),
  });

  /** Job and ConfigMap carry the ImageBuild's name; pods carry the build id, mapped back here. */
  function jobNameOf(o: { metadata?: { name?: string; labels?: Record<string, string> } }): string | undefined {
    const id = o.metadata?.labels?.[BUILD_LABEL];
    if (!id) return undefined;
    for (const b of builds.store.values()) if (b.spec.buildId === id) return b.metadata.name;
    return buildResourceName(id);
  }

  async function report(name: string, r: BuildReport): Promise<void> {
    const key = `${r.phase}|${r.job_created_at ?? ""}|${r.message ?? ""}`;
    if (reported.get(name) === key) return;
    await deps.reportStatus([r]);
    counts.reports++;
    reported.set(name, key);
  }

  async function reconcile(name: string): Promise<void> {
    if (stopped) return;
    const b = builds.store.get(`${ns}/${name}`);
    if (!b || b.metadata.deletionTimestamp) {
      await remove(name);
      return;
    }
    if (b.spec.cluster !== deps.clusterId) return;
    const egress = JSON.stringify(b.spec.egressCidrs);
    if (policy !== egress) {
      await serverSideApply(
        deps.kube,
        `/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies/${BUILD_POLICY}`,
        buildNetworkPolicy(ns, b.spec.egressCidrs),
        { fieldManager: FIELD_MANAGER, force: true },
      );
      policy = egress;
    }
    let job = jobs.store.get(`${ns}/${name}`);
    if (!job) {
      if (finished.has(name)) return;
      await serverSideApply(deps.kube, `/api/v1/namespaces/${ns}/configmaps/${name}`, buildConfigMap(b, ns), {
        fieldManager: FIELD_MANAGER,
        force: true,
      });
      const made = await deps.kube.request<Job>("POST", `/apis/batch/v1/namespaces/${ns}/jobs`, {
        body: buildJob(b, ns, deps.nodeSelector),
      });
      if (made.status === 201) {
        counts.jobCreates++;
        job = made.body;
        log.info({ build: b.spec.buildId, job: name }, "build Job created");
      } else if (made.status === 409) {
        const got = await deps.kube.request<Job>("GET", `/apis/batch/v1/namespaces/${ns}/jobs/${name}`);
        if (got.status !== 200) throw new Error(`reading build Job ${name}: ${got.status}`);
        job = got.body;
      } else throw new Error(`creating build Job ${name}: ${made.status} ${JSON.stringify(made.body).slice(0, 300)}`);
    }
    const createdAt = job.metadata.creationTimestamp ?? new Date().toISOString();
    const pod = newestPod(b.spec.buildId);
    const podPhase = pod?.status?.phase;
    if (pod && podPhase && podPhase !== "Pending") follow(name, b.spec.buildId, pod.metadata.name);
    const end = (job.status?.conditions ?? []).find(
      (c) => (c.type === "Complete" || c.type === "Failed") && c.status === "True",
    );
    const at = new Date().toISOString();
    if (end) {
      if (!finished.has(name)) await drain(name, b.spec.buildId, pod?.metadata.name);
      finished.add(name);
      await report(name, {
        build: b.spec.buildId,
        phase: end.type === "Complete" ? "Succeeded" : "Failed",
        job_created_at: createdAt,
        ...(end.type === "Failed" ? { message: (end.message ?? end.reason ?? "its Job failed").slice(0, 2048) } : {}),
        at,
      });
      return;
    }
    const running = podPhase === "Running" || podPhase === "Succeeded" || podPhase === "Failed";
    await report(name, {
      build: b.spec.buildId,
      phase: running ? "Running" : "Pending",
      job_created_at: createdAt,
      at,
    });
  }

  function newestPod(buildId: string): Pod | undefined {
    let best: Pod | undefined;
    for (const p of pods.store.values())
      if (p.metadata.labels?.[BUILD_LABEL] === buildId)
        if (!best || (p.metadata.creationTimestamp ?? "") > (best.metadata.creationTimestamp ?? "")) best = p;
    return best;
  }

  async function remove(name: string): Promise<void> {
    const f = followers.get(name);
    if (f) {
      f.abort.abort();
      clearTimeout(f.timer);
      followers.delete(name);
    }
    reported.delete(name);
    finished.delete(name);
    if (jobs.store.get(`${ns}/${name}`)) {
      const r = await deps.kube.request("DELETE", `/apis/batch/v1/namespaces/${ns}/jobs/${name}`, {
        body: { propagationPolicy: "Background" },
      });
      if (r.status < 300) {
        counts.jobDeletes++;
        log.info({ job: name }, "build Job deleted: its ImageBuild is gone");
      } else if (r.status !== 404) throw new Error(`deleting build Job ${name}: ${r.status}`);
    }
    const cm = await deps.kube.request("DELETE", `/api/v1/namespaces/${ns}/configmaps/${name}`);
    if (cm.status >= 300 && cm.status !== 404) throw new Error(`deleting build ConfigMap ${name}: ${cm.status}`);
  }

  // --- logs ------------------------------------------------------------------------------------------------

  function follow(name: string, buildId: string, pod: string): void {
    const existing = followers.get(name);
    if (existing?.pod === pod || finished.has(name)) return;
    if (existing) existing.abort.abort();
    const f: Follower = {
      pod,
      abort: new AbortController(),
      cursor: existing?.cursor ?? new LogCursor(),
      pending: existing?.pending ?? [],
      running: Promise.resolve(),
      flushing: undefined,
      timer: undefined,
    };
    followers.set(name, f);
    f.running = (async () => {
      while (!f.abort.signal.aborted && !stopped) {
        try {
          await readLog(f, buildId, true);
        } catch (e) {
          if (f.abort.signal.aborted) return;
          log.debug({ build: buildId, error: errInfo(e) }, "following a build log failed; following again");
        }
        // The stream ended (the container stopped, or the connection broke): follow again from the cursor
        // until the Job's end stops it.
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
  }

  /** Reads the log (followed, or what is there now) from the cursor's second on; admits only new lines. */
  async function readLog(f: Follower, buildId: string, followed: boolean): Promise<void> {
    const stream = deps.kube.stream;
    if (!stream) throw new Error("this Kubernetes client cannot stream");
    const since = f.cursor.at ? `${f.cursor.at.slice(0, 19)}Z` : undefined;
    const res = await stream.call(deps.kube, `/api/v1/namespaces/${ns}/pods/${f.pod}/log`, {
      query: { timestamps: "true", ...(followed ? { follow: "true" } : {}), ...(since ? { sinceTime: since } : {}) },
      ...(followed ? { signal: f.abort.signal } : {}),
    });
    if (followed) counts.streams++;
    const admit = f.cursor.reader();
    let rest = "";
    const take = (line: string) => {
      if (line === "") return;
      const sp = line.indexOf(" ");
      const at = sp > 0 ? line.slice(0, sp) : line;
      if (!admit(at)) return;
      f.pending.push({ at, text: sp > 0 ? line.slice(sp + 1) : "" });
      if (followed) scheduleFlush(f, buildId);
    };
    res.setEncoding("utf8");
    for await (const chunk of res as AsyncIterable<string>) {
      const parts = (rest + chunk).split("\n");
      rest = parts.pop() ?? "";
      for (const p of parts) take(p);
    }
    take(rest);
  }

  function scheduleFlush(f: Follower, buildId: string): void {
    if (f.timer || f.flushing) return;
    f.timer = setTimeout(
      () => {
        f.timer = undefined;
        void flush(f, buildId).catch((e: unknown) => {
          log.warn({ build: buildId, error: errInfo(e) }, "sending build log lines failed; sent again");
          setTimeout(() => scheduleFlush(f, buildId), 1000).unref();
        });
      },
      f.pending.length >= MAX_BATCH ? 0 : flushMs,
    );
  }

  async function flush(f: Follower, buildId: string): Promise<void> {
    while (f.flushing) await f.flushing;
    const run = (async () => {
      while (f.pending.length > 0) {
        const batch = f.pending.slice(0, MAX_BATCH);
        await deps.sendLogs(buildId, batch);
        counts.logBatches++;
        f.pending.splice(0, batch.length);
      }
    })();
    f.flushing = run;
    try {
      await run;
    } finally {
      f.flushing = undefined;
    }
  }

  /** The Job ended: stop following, read what the stream had not shown yet, and send every line. */
  async function drain(name: string, buildId: string, pod: string | undefined): Promise<void> {
    let f = followers.get(name);
    if (!f && pod) {
      f = {
        pod,
        abort: new AbortController(),
        cursor: new LogCursor(),
        pending: [],
        running: Promise.resolve(),
        flushing: undefined,
        timer: undefined,
      };
      followers.set(name, f);
    }
    if (!f) return;
    f.abort.abort();
    clearTimeout(f.timer);
    f.timer = undefined;
    await f.running;
    try {
      await readLog(f, buildId, false);
    } catch (e) {
      log.debug({ build: buildId, error: errInfo(e) }, "reading the end of a build log failed");
    }
    await flush(f, buildId);
    followers.delete(name);
  }

  // --- resync ----------------------------------------------------------------------------------------------

  let resync: NodeJS.Timeout | undefined;
  const sweep = () => {
    if (stopped) return;
    // Levels again: a report the control plane lost is sent once more; Jobs without their ImageBuild go.
    reported.clear();
    for (const b of builds.store.values()) queue.add(b.metadata.name);
    for (const j of jobs.store.values()) if (!builds.store.get(`${ns}/${j.metadata.name}`)) queue.add(j.metadata.name);
    resync = setTimeout(sweep, resyncMs);
  };
  builds.start();
  jobs.start();
  pods.start();
  resync = setTimeout(sweep, resyncMs);
  void Promise.all([builds.waitForSync(), jobs.waitForSync(), pods.waitForSync()])
    .then(() => {
      for (const j of jobs.store.values())
        if (!builds.store.get(`${ns}/${j.metadata.name}`)) queue.add(j.metadata.name);
    })
    .catch(() => undefined);

  return {
    get synced() {
      return builds.synced && jobs.synced && pods.synced;
    },
    counts,
    async stop() {
      stopped = true;
      clearTimeout(resync);
      for (const f of followers.values()) {
        f.abort.abort();
        clearTimeout(f.timer);
      }
      await Promise.all([builds.stop(), jobs.stop(), pods.stop(), queue.stop()]);
      await Promise.allSettled([...followers.values()].map((f) => f.running));
    },
  };
}
