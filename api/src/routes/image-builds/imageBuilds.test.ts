// biome-ignore-all lint/suspicious/noExplicitAny: the test reads Kubernetes objects as they come
// Image builds on the bed: a build cluster (kube-apiserver, controller-manager's Job controller, the
// scheduler and kwok, which takes the Job's pod through its phases and serves its log lines) with the
// operator's build controller reporting over the internal plane, Berth's OCI registry, Postgres, the API
// and the worker's build loop (which writes ImageBuild resources). The bed has no container runtime: the test
// pushes a real image to Berth's registry as the builder would and puts the builder's digest line into
// the log kwok serves; success, the digest check and the negative case (the Job succeeds, nothing was
// pushed) all run for real.

import { generateKeyPairSync } from "node:crypto";
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUILD_CONTROLLER_RULES } from "@berth/controllers";
import { HttpKube } from "@berth/controllers/kube";
import { ImageBuildKind, resourcePath } from "@berth/crds";
import { loadCrds } from "@berth/crds/manifests";
import {
  criLogLines,
  type Fleet,
  kubeConfigFrom,
  type LocalRegistry,
  pushImage,
  startFleet,
  startRegistry,
} from "@berth/e2e";
import { ApiextensionsV1Api } from "@kubernetes/client-node";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installDefaultCatalog } from "../../bootstrap/catalog.ts";
import { clustersOf } from "../../domain/clusters/runtime.ts";
import {
  anIdentityWorld,
  type IdentityTestApi,
  type IdentityWorld,
  startIdentityTestApi,
  type TestUser,
} from "../../domain/identity/identity.test-support.ts";
import {
  type BuildOperator,
  installBuildsOn,
  startBuildOperator,
} from "../../domain/images/buildOperator.test-support.ts";
import { RegistryClient } from "../../domain/images/registry.ts";
import { verifyImageSignature } from "../../domain/images/signatures.ts";
import { buildClusterRbac } from "../../rbac.ts";
import { BuildLoop } from "../../worker/builds.ts";

let fleet: Fleet;
let mgmt: HttpKube;
let build: HttpKube;
let target: LocalRegistry;
let t: IdentityTestApi;
let w: IdentityWorld;
let loop: BuildLoop;
let operator: BuildOperator;
let controlPlaneCred: { serviceAccount: string; kubeconfig: string; token: string };
let podLog: string;
let signingKeyFile: string;
const signingKey = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
const CLUSTER = "clu_buildbed1";
const NS = "berth-builds";

beforeAll(async () => {
  [fleet, target] = await Promise.all([
    startFleet({
      clusters: [
        { name: "mgmt", kind: "management" },
        { name: "build", kind: "gpu", nodes: [] },
      ],
    }),
    startRegistry({ name: "berth" }),
  ]);
  const kc = kubeConfigFrom(fleet.cluster("mgmt").kubeconfig);
  const ext = kc.makeApiClient(ApiextensionsV1Api);
  for (const crd of loadCrds()) await ext.createCustomResourceDefinition({ body: crd as never });
  mgmt = new HttpKube(kc);
  await installDefaultCatalog(mgmt);
  build = new HttpKube(kubeConfigFrom(fleet.cluster("build").kubeconfig));
  // A node without GPUs: where builds go.
  const cpu = { cpu: "16", memory: "64Gi", pods: "110", "ephemeral-storage": "500Gi" };
  await build.json("POST", "/api/v1/nodes", {
    body: {
      apiVersion: "v1",
      kind: "Node",
      metadata: {
        name: "cpu-0",
        annotations: { "kwok.x-k8s.io/node": "fake" },
        labels: {
          "kubernetes.io/hostname": "cpu-0",
          "kubernetes.io/os": "linux",
          "kubernetes.io/arch": "amd64",
          type: "kwok",
        },
      },
      spec: { providerID: "kwok://cpu-0" },
      status: { capacity: cpu, allocatable: cpu, phase: "Pending" },
    },
  });
  podLog = join(fleet.dataDir, "build", "pod-log.cri");
  signingKeyFile = join(fleet.dataDir, "berth-signing.pem");
  writeFileSync(signingKeyFile, signingKey.privateKey.export({ type: "pkcs8", format: "pem" }));
  t = await startIdentityTestApi({
    kubeConfig: kc,
    clusters: true,
    env: {
      BERTH_REGISTRY_URL: target.url,
      BERTH_BUILD_DOCKERFILE_MAX_BYTES: "2048",
      BERTH_IMAGE_SIGNING_KEY_FILE: signingKeyFile,
    },
  });
  w = await anIdentityWorld(t);
  await t.database.db("clusters").insert({ id: CLUSTER, name: "build", session_domain: "build.bed.test" });
  // The operator's install for builds, then least-privilege credentials: the operator's build grants, and
  // the control plane's registered credential, without its build grants until a test gives them.
  await installBuildsOn(build, NS);
  const operatorCred = await fleet
    .cluster("build")
    .mintCredential({ name: "berth-operator", namespace: NS, rules: BUILD_CONTROLLER_RULES });
  controlPlaneCred = await fleet
    .cluster("build")
    .mintCredential({ name: "berth-control-plane", namespace: NS, rules: [] });
  const store = clustersOf(t.deps).store;
  const secretRef = await store.createCredentialSecret(CLUSTER, {
    server: fleet.cluster("build").server,
    caPem: fleet.cluster("build").caPem,
    token: controlPlaneCred.token,
  });
  await store.createCluster({ id: CLUSTER, name: "build", sessionDomain: "build.bed.test", secretRef });
  operator = await startBuildOperator({
    deps: t.deps,
    clusterId: CLUSTER,
    kubeConfig: kubeConfigFrom(operatorCred.kubeconfig),
    log: pino({ level: "silent" }),
  });
  const asControlPlane = new HttpKube(kubeConfigFrom(controlPlaneCred.kubeconfig));
  loop = new BuildLoop({
    db: t.database.db,
    kube: mgmt,
    config: t.deps.config.images as NonNullable<typeof t.deps.config.images>,
    log: pino({ level: "silent" }),
    clusterClient: async () => asControlPlane,
  });
}, 180_000);

afterAll(async () => {
  await loop?.stop();
  await operator?.stop();
  await t?.stop();
  mgmt?.close();
  build?.close();
  await Promise.all([fleet?.stop(), target?.stop()]);
});

/** Passes of the build loop until the build has finished. */
async function settle(user: TestUser, id: string) {
  for (let i = 0; i < 60; i++) {
    await loop.pass();
    const r = await t.request("GET", `/api/v1/image-builds/${id}`, { token: user.token });
    if (!["queued", "running"].includes(r.body.state)) return r.body;
    await new Promise((res) => setTimeout(res, 250));
  }
  throw new Error(`build ${id} never finished`);
}

/** The log stream until its end event (or `stopAt` seen), from after `lastId`. */
async function readLogs(user: TestUser, id: string, lastId?: string) {
  const res = await fetch(`${t.api.url}/api/v1/image-builds/${id}/logs`, {
    headers: { Authorization: `Bearer ${user.token}`, ...(lastId ? { "Last-Event-ID": lastId } : {}) },
  });
  expect(res.headers.get("content-type")).toContain("text/event-stream");
  return res.text();
}

const mark = () => t.request("PUT", `/api/v1/image-builds/clusters/${CLUSTER}`, { token: w.superAdmin.token });

/** The owner's notifications about one build, as the bell reads them. */
async function bellFor(user: TestUser, buildId: string) {
  const r = await t.request("GET", "/api/v1/notifications?kind=image_build.finished", { token: user.token });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return (r.body.data as { title: string; body: string; data: { build_id: string; state: string } }[]).filter(
    (n) => n.data.build_id === buildId,
  );
}

describe("building an image", () => {
  it("refuses builds while no cluster is marked for them, and creates nothing", async () => {
    const r = await t.request("POST", "/api/v1/image-builds", {
      token: w.memberA.token,
      json: { dockerfile: "FROM scratch\n", name: "early" },
    });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe("no_build_cluster");
    expect(await t.database.db("private_images").where({ owner_id: w.memberA.id }).count({ n: "*" }).first()).toEqual({
      n: "0",
    });
  });

  it("lets only a super_admin mark build clusters, once the cluster's credential has what builds need", async () => {
    expect((await t.request("PUT", `/api/v1/image-builds/clusters/${CLUSTER}`, { token: w.adminA.token })).status).toBe(
      403,
    );
    expect(
      (await t.request("PUT", "/api/v1/image-builds/clusters/clu_nosuch", { token: w.superAdmin.token })).status,
    ).toBe(404);
    const bare = await mark();
    expect(bare.status, JSON.stringify(bare.body)).toBe(422);
    expect(bare.body.error).toMatchObject({
      code: "build_cluster_not_ready",
      details: {
        missing_permissions: [
          "create imagebuilds.berth.dev in berth-builds",
          "delete imagebuilds.berth.dev in berth-builds",
        ],
      },
    });
    const bad = await t.request("PUT", `/api/v1/image-builds/clusters/${CLUSTER}`, {
      token: w.superAdmin.token,
      json: { push_secret: "Not A Name" },
    });
    expect(bad.status).toBe(400);
    // The grants builds need, as an administrator of the build cluster gives them.
    const rules = buildClusterRbac(NS).namespaceRules[0]?.rules;
    const role = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: "berth-builds", namespace: NS },
      rules,
    };
    await build.json("POST", `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, { body: role });
    await build.json("POST", `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
      body: {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "berth-builds", namespace: NS },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "berth-builds" },
        subjects: [{ kind: "ServiceAccount", name: controlPlaneCred.serviceAccount, namespace: NS }],
      },
    });
    await expect.poll(async () => (await mark()).status, { timeout: 10_000 }).toBe(204);
    const list = await t.request("GET", "/api/v1/image-builds/clusters", { token: w.superAdmin.token });
    expect(list.body.data.map((c: { cluster_id: string }) => c.cluster_id)).toEqual([CLUSTER]);
  });

  it("answers 503 when the cluster to mark does not answer, and marks nothing", async () => {
    const gone = "clu_buildgone";
    await t.database.db("clusters").insert({ id: gone, name: "gone", session_domain: "gone.bed.test" });
    const store = clustersOf(t.deps).store;
    const secretRef = await store.createCredentialSecret(gone, {
      server: "https://127.0.0.1:1",
      caPem: fleet.cluster("build").caPem,
      token: controlPlaneCred.token,
    });
    await store.createCluster({ id: gone, name: "gone", sessionDomain: "gone.bed.test", secretRef });
    const r = await t.request("PUT", `/api/v1/image-builds/clusters/${gone}`, { token: w.superAdmin.token });
    expect(r.status, JSON.stringify(r.body)).toBe(503);
    expect(r.body.error).toMatchObject({ code: "unavailable", details: { cluster_id: gone } });
    const list = await t.request("GET", "/api/v1/image-builds/clusters", { token: w.superAdmin.token });
    expect(list.body.data.map((c: { cluster_id: string }) => c.cluster_id)).not.toContain(gone);
  });

  it("runs the Job on the build cluster, streams its log, and succeeds once Berth's registry has the reported digest", async () => {
    const repo = `${w.orgA.id}/${w.memberA.id}/lab`;
    // What the builder would do: push the image, then print its digest.
    const pushed = await pushImage(target.url, repo, "1");
    appendFileSync(
      podLog,
      criLogLines(["#1 [internal] load build definition from Dockerfile", `BERTH_IMAGE_DIGEST=${pushed.digest}`]),
    );
    const r = await t.request("POST", "/api/v1/image-builds", {
      token: w.memberA.token,
      json: {
        dockerfile: "ARG BASE_IMAGE\nFROM $BASE_IMAGE\nRUN pip install numpy\n",
        name: "lab",
        tag: "1",
        base_image: "jupyterlab",
      },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    expect(r.body).toMatchObject({ state: "queued", reused: false, cluster_id: CLUSTER, base_image: "jupyterlab" });
    const img = await t.request("GET", `/api/v1/images/private/${r.body.image_id}`, { token: w.memberA.token });
    expect(img.body.state).toBe("building");

    await loop.pass();
    // The worker wrote the ImageBuild; the cluster's operator makes the Job from it.
    const resource = (await build.json("GET", resourcePath(ImageBuildKind, { namespace: NS }))) as {
      items: any[];
    };
    expect(resource.items.find((b) => b.spec.buildId === r.body.id)?.spec).toMatchObject({
      cluster: CLUSTER,
      baseImage: "quay.io/jupyter/pytorch-notebook:cuda12-latest",
      insecureRegistry: true,
    });
    const spec = await expect
      .poll(async () => {
        const jobs = (await build.json("GET", `/apis/batch/v1/namespaces/${NS}/jobs`)) as { items: any[] };
        return jobs.items.find((j) => j.metadata.labels["berth.dev/image-build"] === r.body.id)?.spec;
      })
      .toBeTruthy()
      .then(async () => {
        const jobs = (await build.json("GET", `/apis/batch/v1/namespaces/${NS}/jobs`)) as { items: any[] };
        return jobs.items.find((j) => j.metadata.labels["berth.dev/image-build"] === r.body.id)?.spec;
      });
    expect(spec.backoffLimit).toBe(0);
    const pod = spec.template.spec;
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(
      pod.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0],
    ).toEqual({
      key: "nvidia.com/gpu.count",
      operator: "DoesNotExist",
    });
    expect(pod.containers[0].securityContext).toMatchObject({ runAsUser: 1000, runAsNonRoot: true });
    expect(pod.containers[0].resources.limits).toMatchObject({ cpu: "2", memory: "4Gi", "ephemeral-storage": "20Gi" });
    expect(pod.containers[0].args).toContain("build-arg:BASE_IMAGE=quay.io/jupyter/pytorch-notebook:cuda12-latest");
    const np = (await build.json(
      "GET",
      `/apis/networking.k8s.io/v1/namespaces/${NS}/networkpolicies/image-builds`,
    )) as any;
    expect(np.spec.policyTypes).toEqual(["Ingress", "Egress"]);

    const done = await settle(w.memberA, r.body.id);
    expect(done, JSON.stringify(done)).toMatchObject({ state: "succeeded", digest: pushed.digest });
    expect(done.job_created_at).not.toBeNull();
    // The end withdraws the resource; the operator then deletes the Job.
    expect(
      (await build.request("GET", resourcePath(ImageBuildKind, { namespace: NS, name: `build-${r.body.id.slice(4)}` })))
        .status,
    ).toBe(404);
    const ready = await t.request("GET", `/api/v1/images/private/${r.body.image_id}`, { token: w.memberA.token });
    expect(ready.body).toMatchObject({
      state: "ready",
      digest: pushed.digest,
      size_bytes: pushed.size,
      source: "build",
    });
    const catalog = await t.request("GET", `/api/v1/images/${r.body.image_id}`, { token: w.memberA.token });
    expect(catalog.body).toMatchObject({ visibility: "private", owner: w.memberA.id });
    expect(catalog.body.image).toContain(`@${pushed.digest}`);
    // Berth's build carries Berth's signature over the digest it pushed.
    const repository = (catalog.body.image as string).replace(/^[^/]+\//, "").replace(/@.*$/, "");
    expect(
      await verifyImageSignature(new RegistryClient({ baseUrl: target.url }), repository, pushed.digest, [
        { name: "berth", key: signingKey.publicKey },
      ]),
    ).toEqual({ ok: true, key: "berth" });
    expect(await bellFor(w.memberA, r.body.id)).toEqual([
      expect.objectContaining({
        title: "Image build succeeded",
        data: expect.objectContaining({ state: "succeeded" }),
      }),
    ]);
    expect(await bellFor(w.memberB, r.body.id)).toEqual([]);

    const text = await readLogs(w.memberA, r.body.id);
    expect(text).toContain("berth test bed: container started");
    expect(text).toContain(`BERTH_IMAGE_DIGEST=${pushed.digest}`);
    expect(text).toContain('event: end\ndata: {"state":"succeeded"');
    const firstId = /id: (\d+)/.exec(text)?.[1] as string;
    const resumed = await readLogs(w.memberA, r.body.id, firstId);
    expect(resumed).not.toContain(`id: ${firstId}\n`);
    expect(resumed).toContain("event: end");
  });

  it("answers an identical request with the earlier build", async () => {
    const again = await t.request("POST", "/api/v1/image-builds", {
      token: w.memberA.token,
      json: {
        dockerfile: "ARG BASE_IMAGE\nFROM $BASE_IMAGE\nRUN pip install numpy\n",
        name: "lab",
        tag: "1",
        base_image: "jupyterlab",
      },
    });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ reused: true, state: "succeeded" });
  });

  it("fails when the Job succeeds but nothing was pushed, and frees the slot", async () => {
    const r = await t.request("POST", "/api/v1/image-builds", {
      token: w.memberA.token,
      json: { dockerfile: "FROM scratch\nCOPY nothing /\n", name: "ghost" },
    });
    expect(r.status).toBe(202);
    const done = await settle(w.memberA, r.body.id);
    expect(done.state).toBe("failed");
    expect(done.failure_reason).toContain("nothing was pushed");
    const [bell, ...more] = await bellFor(w.memberA, r.body.id);
    expect(more).toEqual([]);
    expect(bell).toMatchObject({ title: "Image build failed", data: { state: "failed" } });
    expect(bell?.body).toContain("nothing was pushed");
    const img = await t.request("GET", `/api/v1/images/private/${r.body.image_id}`, { token: w.memberA.token });
    expect(img.body.state).toBe("failed");
    const list = await t.request("GET", "/api/v1/images/private", { token: w.memberA.token });
    expect(list.body.count).toBe(1);
  });

  it("keeps one build in flight per member, and cancels queued and running builds", async () => {
    const first = await t.request("POST", "/api/v1/image-builds", {
      token: w.orgMemberA.token,
      json: { dockerfile: "FROM scratch\n", name: "one" },
    });
    expect(first.status).toBe(202);
    const second = await t.request("POST", "/api/v1/image-builds", {
      token: w.orgMemberA.token,
      json: { dockerfile: "FROM busybox\n", name: "two" },
    });
    expect(second.status).toBe(409);
    expect(second.body.error).toMatchObject({ code: "build_limit_reached", details: { scope: "member", limit: 1 } });
    const cancelled = await t.request("POST", `/api/v1/image-builds/${first.body.id}/cancel`, {
      token: w.orgMemberA.token,
    });
    expect(cancelled.body.state).toBe("cancelled");
    expect(
      (await t.request("GET", `/api/v1/images/private/${first.body.image_id}`, { token: w.orgMemberA.token })).status,
    ).toBe(404);
    expect(
      (await t.request("POST", `/api/v1/image-builds/${first.body.id}/cancel`, { token: w.orgMemberA.token })).status,
    ).toBe(409);

    const running = await t.request("POST", "/api/v1/image-builds", {
      token: w.orgMemberA.token,
      json: { dockerfile: "FROM busybox\n", name: "two" },
    });
    expect(running.status).toBe(202);
    await loop.pass(); // the ImageBuild is written, and the operator makes the Job
    await expect
      .poll(async () => {
        const jobs = (await build.json("GET", `/apis/batch/v1/namespaces/${NS}/jobs`)) as { items: any[] };
        return jobs.items.some((j) => j.metadata.labels["berth.dev/image-build"] === running.body.id);
      })
      .toBe(true);
    expect(
      (await t.request("POST", `/api/v1/image-builds/${running.body.id}/cancel`, { token: w.orgMemberA.token })).status,
    ).toBe(202);
    await loop.pass();
    const after = await t.request("GET", `/api/v1/image-builds/${running.body.id}`, { token: w.orgMemberA.token });
    expect(after.body.state).toBe("cancelled");
    // Both ends, the API's (no Job yet) and the worker's, reach the owner's bell once each.
    for (const id of [first.body.id, running.body.id])
      expect((await bellFor(w.orgMemberA, id)).map((n) => n.title)).toEqual(["Image build cancelled"]);
    await expect
      .poll(async () => {
        const jobs = (await build.json("GET", `/apis/batch/v1/namespaces/${NS}/jobs`)) as { items: any[] };
        return jobs.items.filter(
          (j) => j.metadata.labels["berth.dev/image-build"] === running.body.id && !j.metadata.deletionTimestamp,
        );
      })
      .toEqual([]);
  });

  it("bounds the builds in flight of one organization", async () => {
    const members = await Promise.all(Array.from({ length: 5 }, () => t.aUser()));
    for (const m of members) await t.member(m, w.orgB.id, null, "member");
    const answers = [];
    for (const [i, m] of members.entries())
      answers.push(
        await t.request("POST", "/api/v1/image-builds", {
          token: m.token,
          json: { dockerfile: `FROM scratch\n# org ${i}\n`, name: "org" },
        }),
      );
    expect(answers.slice(0, 4).map((a) => a.status)).toEqual([202, 202, 202, 202]);
    expect(answers[4]?.status).toBe(409);
    expect(answers[4]?.body.error).toMatchObject({
      code: "build_limit_reached",
      details: { scope: "organization", count: 4, limit: 4 },
    });
    for (const [i, a] of answers.slice(0, 4).entries())
      await t.request("POST", `/api/v1/image-builds/${a.body.id}/cancel`, { token: members[i]?.token as string });
  });

  it("answers 404 to another member, and 401 without a token", async () => {
    const mine = (await t.request("GET", "/api/v1/image-builds", { token: w.memberA.token })).body.data[0];
    expect((await t.request("GET", `/api/v1/image-builds/${mine.id}`, { token: w.memberB.token })).status).toBe(404);
    expect((await t.request("GET", `/api/v1/image-builds/${mine.id}/logs`, { token: w.memberB.token })).status).toBe(
      404,
    );
    expect((await t.request("POST", `/api/v1/image-builds/${mine.id}/cancel`, { token: w.memberB.token })).status).toBe(
      404,
    );
    expect((await t.request("GET", `/api/v1/image-builds/${mine.id}`)).status).toBe(401);
    const expired = await t.request("GET", `/api/v1/image-builds/${mine.id}`, {
      token: await t.expiredTokenFor(w.memberA.id),
    });
    expect(expired.body.error.code).toBe("token_expired");
  });
});

describe("the operator's reports on the internal plane", () => {
  const call = (path: string, body: unknown, token: string | undefined = operator.token) =>
    fetch(`${operator.internalUrl}${path}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

  it("keeps each log line once when the operator sends it again, and refuses builds of other clusters", async () => {
    const r = await t.request("POST", "/api/v1/image-builds", {
      token: w.memberB.token,
      json: { dockerfile: "FROM scratch\n# reports\n", name: "reports" },
    });
    expect(r.status).toBe(202);
    const lines = [
      { at: "2026-11-26T10:00:00.25Z", text: "step 1" },
      { at: "2026-11-26T10:00:01Z", text: "step 2" },
      { at: "2026-11-26T10:00:01Z", text: "step 3" },
    ];
    const logs = (ls: unknown[]) => ({ cluster_id: CLUSTER, build: r.body.id, lines: ls });
    expect((await call("/internal/v1/image-builds/logs", logs(lines.slice(0, 2)))).body).toEqual({ accepted: 2 });
    expect((await call("/internal/v1/image-builds/logs", logs(lines))).body).toEqual({ accepted: 1 });
    const stored = await t.database.db("image_build_logs").where({ build_id: r.body.id }).orderBy("seq");
    expect(stored.map((x) => x.text).join("")).toBe("step 1\nstep 2\nstep 3\n");
    // The same new lines sent twice at once (a retry while the first is in flight): kept once.
    const next = [{ at: "2026-11-26T10:00:02Z", text: "step 4" }];
    const both = await Promise.all([
      call("/internal/v1/image-builds/logs", logs(next)),
      call("/internal/v1/image-builds/logs", logs(next)),
    ]);
    expect(both.map((b) => b.body.accepted).sort()).toEqual([0, 1]);
    const after = await t.database.db("image_build_logs").where({ build_id: r.body.id }).orderBy("seq");
    expect(after.map((x) => x.text).join("")).toBe("step 1\nstep 2\nstep 3\nstep 4\n");

    // Another cluster's token may not report on this build; nothing is written.
    await t.database.db("clusters").insert({ id: "clu_otherbuild", name: "other", session_domain: "o.bed.test" });
    await t.database.db("image_builds").where({ id: r.body.id }).update({ cluster_id: "clu_otherbuild" });
    const foreign = await call("/internal/v1/image-builds/status", {
      cluster_id: CLUSTER,
      reports: [{ build: r.body.id, phase: "Running", at: new Date().toISOString() }],
    });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.details.builds).toEqual([r.body.id]);
    expect((await t.database.db("image_builds").where({ id: r.body.id }).first()).state).toBe("queued");
    // A report for another cluster than the token's, none without a token, and a malformed one.
    expect(
      (await call("/internal/v1/image-builds/logs", { ...logs(lines), cluster_id: "clu_otherbuild" })).status,
    ).toBe(403);
    expect((await call("/internal/v1/image-builds/logs", logs(lines), "")).status).toBe(401);
    const bad = await call("/internal/v1/image-builds/status", { cluster_id: CLUSTER, reports: [{ build: "x" }] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("validation_failed");
    // A line without a kubelet timestamp would move the cursor past every later line: refused, nothing kept.
    const unstamped = await call("/internal/v1/image-builds/logs", logs([{ at: "zzz", text: "lost" }]));
    expect(unstamped.status).toBe(400);
    expect(unstamped.body.error.code).toBe("validation_failed");
    await t.database.db("image_builds").where({ id: r.body.id }).update({ cluster_id: CLUSTER });
    await t.request("POST", `/api/v1/image-builds/${r.body.id}/cancel`, { token: w.memberB.token });
  });
});

describe("bad build requests", () => {
  const cases: [string, Record<string, unknown>, number, string, string | undefined][] = [
    ["an empty Dockerfile", { dockerfile: "  \n", name: "x" }, 400, "dockerfile_invalid", "empty"],
    [
      "an oversized Dockerfile",
      { dockerfile: `FROM scratch\n${"#".repeat(3000)}`, name: "x" },
      400,
      "dockerfile_invalid",
      "too_large",
    ],
    [
      "a name outside the OCI grammar",
      { dockerfile: "FROM scratch\n", name: "Bad Name" },
      400,
      "image_reference_invalid",
      "syntax",
    ],
    [
      "a tag outside the OCI grammar",
      { dockerfile: "FROM scratch\n", name: "ok", tag: ".hidden" },
      400,
      "image_reference_invalid",
      "syntax",
    ],
    [
      "a base image not in the catalog",
      { dockerfile: "FROM scratch\n", name: "ok", base_image: "nosuch" },
      400,
      "validation_failed",
      undefined,
    ],
  ];
  for (const [what, body, status, code, reason] of cases)
    it(`answers ${status} ${code} to ${what}, and creates nothing`, async () => {
      const before = await t.database.db("image_builds").where({ owner_id: w.memberB.id }).count({ n: "*" }).first();
      const r = await t.request("POST", "/api/v1/image-builds", { token: w.memberB.token, json: body });
      expect(r.status, JSON.stringify(r.body)).toBe(status);
      expect(r.body.error.code).toBe(code);
      if (reason) expect(r.body.error.details.reason).toBe(reason);
      expect(await t.database.db("image_builds").where({ owner_id: w.memberB.id }).count({ n: "*" }).first()).toEqual(
        before,
      );
      expect(await t.database.db("private_images").where({ owner_id: w.memberB.id }).count({ n: "*" }).first()).toEqual(
        { n: "0" },
      );
    });
});
