// Journey: a member's Dockerfile is built for real. Berth's builder image (cdk8s/src/image/builder.ts:
// rootless BuildKit built here) runs as the build Job's container on the bed's real node (a real kubelet
// and containerd), pulls the base image from Berth's registry, runs the RUN step, pushes the result back;
// the operator's build controller reports the Job and the digest line, the worker confirms the manifest in
// the registry and the image turns ready; a pod on the real node then runs that image and prints the file
// the build wrote. Real parts: the bed's clusters, the real node, Berth's registry (reached from the pods
// through the relay on the node's bridge, e2e/src/builds/real-builds.ts), Postgres, the API, the worker's
// build loop, the operator's build controller. Runs where canRunRealNode() says yes (root, containerd).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import {
  BuildLoop,
  type BuildOperator,
  type IdentityTestApi,
  installBuildsOn,
  startBuildOperator,
  startIdentityTestApi,
  type TestUser,
} from "@berth/api/testing";
import { buildBuilderImage, builderImageRef, extractDebs, pushBuilderImage } from "@berth/cdk8s/image/builder";
import { HttpKube } from "@berth/controllers/kube";
import { loadCrds } from "@berth/crds/manifests";
import { ApiextensionsV1Api } from "@kubernetes/client-node";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answered, bedApi } from "../api-client.ts";
import { startFleet } from "../index.ts";
import { kubeConfigFrom } from "../testbed/kubeconfig.ts";
import { canRunRealNode, pushFileImage, type RealNode, startRealNode } from "../testbed/real-node/index.ts";
import { type LocalRegistry, startRegistry } from "../testbed/registry.ts";
import type { Fleet } from "../testbed/types.ts";
import { eventually } from "../testbed/waiting.test-support.ts";
import {
  BUILDS_NAMESPACE,
  ensureBridgeAddress,
  REAL_NODE_BUILDS,
  type RegistryRelay,
  startRegistryRelay,
} from "./real-builds.ts";

const NODE = "builds-real-1";
const can = canRunRealNode();

describe.skipIf(!can.ok)(
  `a member's Dockerfile built by the real builder on the real node${can.ok ? "" : ` (skipped: ${can.reason})`}`,
  () => {
    let fleet: Fleet;
    let registry: LocalRegistry;
    let relay: RegistryRelay;
    let node: RealNode;
    let t: IdentityTestApi;
    let mgmtKube: HttpKube;
    let buildKube: HttpKube;
    let operator: BuildOperator;
    let builds: BuildLoop;
    let member: TestUser;
    let base = "";
    let work = "";
    const figures: string[] = [];

    beforeAll(async () => {
      [fleet, registry] = await Promise.all([
        startFleet({
          clusters: [
            { name: "mgmt", kind: "management" },
            { name: "build", kind: "gpu", nodes: [] },
          ],
        }),
        startRegistry({ name: "berth" }),
      ]);
      // The node's own subnet, apart from the default one another real node may be using.
      node = await startRealNode({
        cluster: fleet.cluster("build"),
        name: NODE,
        gpuModel: "NVIDIA-L4",
        gpuCount: 1,
        podCidr: "10.236.7.0/24",
      });
      relay = await startRegistryRelay(ensureBridgeAddress(node), registry.host);
      node.trustRegistry(relay.host);

      const built = buildBuilderImage({ quiet: true });
      figures.push(
        `builder image ${built.digest}: ${(built.layer.size / 2 ** 20).toFixed(1)} MiB compressed, ${(built.layer.unpacked / 2 ** 20).toFixed(1)} MiB unpacked (${built.cached ? "from the cache" : `built in ${built.seconds.toFixed(0)} s`})`,
      );
      await pushBuilderImage(built, registry.host);
      // A base image of Berth's registry: a static busybox as /bin/sh, which the RUN step needs.
      work = mkdtempSync(join(tmpdir(), "berth-real-builds-"));
      const busybox = join(extractDebs(["busybox-static"], work), "bin/busybox");
      await pushFileImage(registry.url, "bed/busybox", "1", {
        files: [{ path: "bin/sh", content: busybox }],
        entrypoint: ["/bin/sh"],
      });
      base = `${relay.host}/bed/busybox:1`;

      const kc = kubeConfigFrom(fleet.cluster("mgmt").kubeconfig);
      const ext = kc.makeApiClient(ApiextensionsV1Api);
      for (const crd of loadCrds()) await ext.createCustomResourceDefinition({ body: crd as never });
      mgmtKube = new HttpKube(kc);
      t = await startIdentityTestApi({
        kubeConfig: kc,
        env: {
          BERTH_REGISTRY_URL: registry.url,
          // What the node's pods and its kubelet name Berth's registry by.
          BERTH_REGISTRY_PULL_PREFIX: relay.host,
          BERTH_BUILDER_IMAGE: builderImageRef(relay.host, built.tag),
        },
      });
      buildKube = new HttpKube(kubeConfigFrom(fleet.cluster("build").kubeconfig));
      await t.database.db("clusters").insert({ id: "clu_realbuild", name: "build", session_domain: "build.bed.test" });
      await t.database
        .db("build_clusters")
        .insert({ cluster_id: "clu_realbuild", marked_by: "test", marked_at: new Date() });
      await installBuildsOn(buildKube, BUILDS_NAMESPACE);
      operator = await startBuildOperator({
        deps: t.deps,
        clusterId: "clu_realbuild",
        kubeConfig: kubeConfigFrom(fleet.cluster("build").kubeconfig),
        log: pino({ level: "silent" }),
        nodeSelector: REAL_NODE_BUILDS,
      });
      builds = new BuildLoop({
        db: t.database.db,
        kube: mgmtKube,
        config: t.deps.config.images as NonNullable<typeof t.deps.config.images>,
        log: pino({ level: "silent" }),
        clusterClient: async () => buildKube,
        intervalMs: 300,
      });
      builds.start();
      const org = await t.anOrganization("Lab");
      member = await t.aUser({ email: `builder-${Date.now()}@lab.test` });
      await t.member(member, org.id, null, "member");
    }, 1_800_000);

    afterAll(async () => {
      await builds?.stop();
      await operator?.stop();
      buildKube?.close();
      await t?.stop();
      mgmtKube?.close();
      await node?.stop();
      await relay?.stop();
      await Promise.all([registry?.stop(), fleet?.stop()]);
      if (work) rmSync(work, { recursive: true, force: true });
      if (figures.length > 0) console.log(`[real builds]\n${figures.join("\n")}`);
    }, 180_000);

    it("builds and pushes the image, which turns ready and runs on the real node", async () => {
      const started = Date.now();
      const api = bedApi({ t }, member);
      const r = await answered({ t }, member, (a) =>
        a.call("createImageBuild", {
          body: { dockerfile: `FROM ${base}\nRUN echo built on the real node > /built.txt\n`, name: "hello", tag: "1" },
        }),
      );
      expect(r.status, JSON.stringify(r.body)).toBe(202);

      // The build's pod, watched while it lives (the build's end deletes the Job, and the pod with it): the
      // node it ran on, and on a failure its status and its own log.
      type PodView = {
        metadata: { name: string };
        spec: { nodeName?: string };
        status: { phase?: string; containerStatuses?: { state?: { terminated?: unknown } }[] };
      };
      const seen = new Map<string, { node?: string; status?: unknown; log?: unknown }>();
      const watchPods = async () => {
        const pods = await buildKube.json<{ items: PodView[] }>("GET", `/api/v1/namespaces/${BUILDS_NAMESPACE}/pods`, {
          query: { labelSelector: `berth.dev/image-build=${r.body.id}` },
        });
        for (const p of pods.items) {
          const was = seen.get(p.metadata.name) ?? {};
          const ended = p.status.containerStatuses?.[0]?.state?.terminated !== undefined;
          const log = ended
            ? (await buildKube.request("GET", `/api/v1/namespaces/${BUILDS_NAMESPACE}/pods/${p.metadata.name}/log`))
                .body
            : was.log;
          seen.set(p.metadata.name, { node: p.spec.nodeName ?? was.node, status: p.status, log });
        }
      };
      const done = await eventually(
        async () => {
          await watchPods();
          const b = await api.call("getImageBuild", { params: { id: r.body.id } });
          return ["queued", "running"].includes(b.state) ? undefined : b;
        },
        { what: `build ${r.body.id} finished`, timeoutMs: 600_000, intervalMs: 500 },
      );
      const logs = await fetch(`${t.api.url}/api/v1/image-builds/${r.body.id}/logs`, {
        headers: { Authorization: `Bearer ${member.token}` },
      }).then((res) => res.text());
      if (done.state !== "succeeded")
        expect.fail(`${JSON.stringify(done)}\n${logs}\n${JSON.stringify([...seen.entries()], null, 1)}`);
      // The Job ran on the real node.
      expect([...seen.values()].map((p) => p.node)).toEqual([NODE]);
      figures.push(`build: requested → succeeded in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      // The RUN step ran in BuildKit, on the node: its log came through the operator.
      expect(logs).toContain("RUN echo built on the real node > /built.txt");
      expect(logs).toContain(`BERTH_IMAGE_DIGEST=${done.digest}`);

      // The image is ready in the catalog, under the name the node's pods use for Berth's registry.
      const ready = await api.call("getPrivateImage", { params: { id: r.body.image_id } });
      expect(ready).toMatchObject({ state: "ready", digest: done.digest, source: "build" });
      const catalog = await api.call("getImage", { params: { name: r.body.image_id } });
      const image = catalog.image as string;
      expect(image).toBe(`${relay.host}/${image.slice(relay.host.length + 1).split("@")[0]}@${done.digest}`);

      // The pushed layer holds the file the RUN step wrote.
      const repo = image.slice(relay.host.length + 1).split("@")[0] as string;
      const manifest = (await fetch(`${registry.url}/v2/${repo}/manifests/${done.digest}`, {
        headers: { Accept: "application/vnd.oci.image.manifest.v1+json" },
      }).then((res) => res.json())) as { layers: { digest: string }[] };
      const top = manifest.layers.at(-1)?.digest as string;
      const layer = gunzipSync(
        Buffer.from(await (await fetch(`${registry.url}/v2/${repo}/blobs/${top}`)).arrayBuffer()),
      );
      expect(layer.toString("latin1")).toContain("built.txt");
      expect(layer.toString("latin1")).toContain("built on the real node\n");

      // The kubelet pulls the built image from Berth's registry and runs it.
      await buildKube.json("POST", "/api/v1/namespaces/default/pods", {
        body: {
          metadata: { name: "runs-the-build" },
          spec: {
            nodeSelector: REAL_NODE_BUILDS,
            tolerations: [{ key: "berth.dev/real-node", operator: "Exists", effect: "NoSchedule" }],
            restartPolicy: "Never",
            terminationGracePeriodSeconds: 1,
            containers: [{ name: "app", image, command: ["/bin/sh", "-c", "cat /built.txt"] }],
          },
        },
      });
      await eventually(
        async () => {
          const p = await buildKube.json<{ status: { phase?: string } }>(
            "GET",
            "/api/v1/namespaces/default/pods/runs-the-build",
          );
          return p.status.phase === "Succeeded" ? p : undefined;
        },
        { what: "the pod of the built image Succeeded", timeoutMs: 120_000 },
      );
      const out = await buildKube.request("GET", "/api/v1/namespaces/default/pods/runs-the-build/log");
      expect(String(out.body)).toBe("built on the real node\n");
    }, 900_000);
  },
);
