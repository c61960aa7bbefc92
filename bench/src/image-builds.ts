// biome-ignore-all lint/suspicious/noExplicitAny: the bench reads the API's JSON as it comes
// Image builds on the bed (docs/dev/images.md): a build cluster (kwok runs the Job's pod through its
// phases) with the operator's build controller (ImageBuild → Job, log followed, reports over the
// internal plane), Berth's OCI registry, Postgres, the API and the worker's build loop (its pass every 200 ms).
// For --builds sequential builds of one member (the image pushed beforehand, as the builder would):
//   time from POST /api/v1/image-builds to the Job created, and to `succeeded` (digest checked in the
//   registry, Image resource written), p50 and max; baseline: a bare Job with the same pod made directly
//   on the build cluster, from create to Complete (what kwok, the Job controller and the scheduler take).
//
//   node bench/src/image-builds.ts [--builds=10]
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { parseConfig, startApi, startPostgres } from "@berth/api";
import { AccessTokens, BuildLoop, installBuildsOn, startBuildOperator } from "@berth/api/testing";
import { HttpKube } from "@berth/controllers/kube";
import { ImageKind, resourcePath } from "@berth/crds";
import { loadCrds } from "@berth/crds/manifests";
import { criLogLines, kubeConfigFrom, pushImage, startFleet, startRegistry } from "@berth/e2e";
import pino from "pino";
import { apiAs } from "./api.ts";
import { upperPercentile } from "./kit/percentile.ts";

const { values } = parseArgs({ options: { builds: { type: "string", default: "10" } } });
const N = Number(values.builds);

const dir = mkdtempSync(join(tmpdir(), "berth-bench-builds-"));
const [fleet, registry, pg] = await Promise.all([
  startFleet({
    clusters: [
      { name: "mgmt", kind: "management" },
      { name: "build", kind: "gpu", nodes: [] },
    ],
  }),
  startRegistry({ name: "bench-builds" }),
  startPostgres({ dataDir: join(dir, "pg") }),
]);
const mgmt = new HttpKube(kubeConfigFrom(fleet.cluster("mgmt").kubeconfig));
const build = new HttpKube(kubeConfigFrom(fleet.cluster("build").kubeconfig));
try {
  for (const crd of loadCrds())
    await mgmt.json("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", { body: crd });
  for (;;) {
    if ((await mgmt.request("GET", resourcePath(ImageKind))).status === 200) break;
    await sleep(100);
  }
  const cpu = { cpu: "16", memory: "64Gi", pods: "110", "ephemeral-storage": "500Gi" };
  await build.json("POST", "/api/v1/nodes", {
    body: {
      apiVersion: "v1",
      kind: "Node",
      metadata: { name: "cpu-0", annotations: { "kwok.x-k8s.io/node": "fake" }, labels: { type: "kwok" } },
      spec: { providerID: "kwok://cpu-0" },
      status: { capacity: cpu, allocatable: cpu, phase: "Pending" },
    },
  });
  const config = parseConfig({
    DATABASE_URL: pg.urlFor("postgres"),
    BERTH_JWT_SECRET: "bench-secret-bench-secret-bench-secret",
    BERTH_API_HOST: "127.0.0.1",
    BERTH_API_PORT: "0",
    BERTH_LOG_LEVEL: "warn",
    BERTH_REGISTRY_URL: registry.url,
    BERTH_WEBHOOK_SECRET_KEYS: `bench:${Buffer.alloc(32, 1).toString("base64")}`,
    BERTH_METRICS_PORT: "0",
  });
  const api = await startApi({ config, startupTasks: [] });
  const db = api.deps.db;
  const loop = new BuildLoop({
    db,
    kube: mgmt,
    config: config.images as NonNullable<typeof config.images>,
    log: pino({ level: "warn" }),
    clusterClient: async () => build,
    intervalMs: 200,
  });
  loop.start();
  let operator: Awaited<ReturnType<typeof startBuildOperator>> | undefined;
  try {
    await db("users").insert({ id: "usr_bench", email: "bench@example.test", password_hash: "x" });
    await db("organizations").insert({ id: "org_bench", name: "Bench", slug: "bench" });
    await db("memberships").insert({ user_id: "usr_bench", organization_id: "org_bench", role: "member" });
    await db("clusters").insert({ id: "clu_benchbuild", name: "build", session_domain: "build.bench.test" });
    await db("build_clusters").insert({ cluster_id: "clu_benchbuild", marked_by: "bench", marked_at: new Date() });
    await installBuildsOn(build, "berth-builds");
    operator = await startBuildOperator({
      deps: api.deps,
      clusterId: "clu_benchbuild",
      kubeConfig: kubeConfigFrom(fleet.cluster("build").kubeconfig),
      log: pino({ level: "warn" }),
    });
    const { token } = await new AccessTokens({ secret: config.auth.jwtSecret.reveal(), ttlSeconds: 3600 }).issue({
      userId: "usr_bench",
      tokenVersion: 0,
    });
    const podLog = join(fleet.dataDir, "build", "pod-log.cri");
    const toJob: number[] = [];
    const toDone: number[] = [];
    for (let i = 0; i < N; i++) {
      const pushed = await pushImage(registry.url, `org_bench/usr_bench/b${i}`, "latest");
      appendFileSync(podLog, criLogLines([`BERTH_IMAGE_DIGEST=${pushed.digest}`]));
      const t0 = performance.now();
      const b = await apiAs(api.url, { token }).call("createImageBuild", {
        body: { dockerfile: `FROM scratch\n# ${i}\n`, name: `b${i}` },
      });
      let jobAt = 0;
      for (;;) {
        const row = await db("image_builds").where({ id: b.id }).first();
        if (!jobAt && row.job_created_at) jobAt = performance.now();
        if (row.state === "succeeded") break;
        if (row.state === "failed") throw new Error(`build ${i} failed: ${row.failure_reason}`);
        await sleep(20);
      }
      toJob.push(jobAt - t0);
      toDone.push(performance.now() - t0);
    }
    // Baseline: the same pod as a bare Job, made directly on the build cluster.
    const bare: number[] = [];
    for (let i = 0; i < N; i++) {
      const t0 = performance.now();
      await build.json("POST", "/apis/batch/v1/namespaces/berth-builds/jobs", {
        body: {
          apiVersion: "batch/v1",
          kind: "Job",
          metadata: { name: `bare-${i}` },
          spec: {
            backoffLimit: 0,
            template: {
              spec: {
                restartPolicy: "Never",
                affinity: {
                  nodeAffinity: {
                    requiredDuringSchedulingIgnoredDuringExecution: {
                      nodeSelectorTerms: [
                        { matchExpressions: [{ key: "nvidia.com/gpu.count", operator: "DoesNotExist" }] },
                      ],
                    },
                  },
                },
                containers: [{ name: "x", image: "busybox" }],
              },
            },
          },
        },
      });
      for (;;) {
        const j: any = await build.json("GET", `/apis/batch/v1/namespaces/berth-builds/jobs/bare-${i}`);
        if ((j.status?.conditions ?? []).some((c: any) => c.type === "Complete" && c.status === "True")) break;
        await sleep(20);
      }
      bare.push(performance.now() - t0);
    }
    console.log(
      `image builds on the bed, ${N} sequential builds of one member (build loop pass: 200 ms; the Job made by the operator)`,
    );
    console.log(
      `  request -> Job created        p50 ${upperPercentile(toJob, 50).toFixed(0)} ms   max ${Math.max(...toJob).toFixed(0)} ms`,
    );
    console.log(
      `  request -> succeeded (pushed)  p50 ${upperPercentile(toDone, 50).toFixed(0)} ms   max ${Math.max(...toDone).toFixed(0)} ms`,
    );
    console.log(
      `  baseline: bare Job create -> Complete on the same cluster  p50 ${upperPercentile(bare, 50).toFixed(0)} ms   max ${Math.max(...bare).toFixed(0)} ms`,
    );
  } finally {
    await loop.stop();
    await operator?.stop();
    await api.stop();
  }
} finally {
  mgmt.close();
  build.close();
  await Promise.all([fleet.stop(), registry.stop(), pg.stop()]);
  rmSync(dir, { recursive: true, force: true });
}
