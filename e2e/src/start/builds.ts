// `npm start`'s image builds, where the real node runs (docs/dev/images.md, "Builds"): its cluster is the
// local fleet's build cluster, and a member's Dockerfile is built there by Berth's builder image
// (cdk8s/src/image/builder.ts, rootless BuildKit) as a real pod on the real node. Two services:
//   builder        before the API: the relay from the node's pods to Berth's registry (its host is the
//                  registry's pull prefix), and the builder image, built (cached) and pushed there;
//                  publishes BERTH_REGISTRY_PULL_PREFIX and BERTH_BUILDER_IMAGE for the API
//   build-cluster  after the clusters are registered: the ImageBuild resource, the builds namespace and
//                  the grants on the real node's cluster, then the cluster marked for builds through the
//                  images domain (the check a super_admin's PUT runs)
// The operators service starts that cluster's operator with builds on, placed on the real node.
// Without a real node both say why in one line and builds stay off (no cluster is marked).
import { markForBuilds } from "@berth/api";
import { controlPlaneRbac } from "@berth/api/rbac";
import { buildBuilderImage, builderImageRef, pushBuilderImage } from "@berth/cdk8s/image/builder";
import {
  ensureBridgeAddress,
  installBuildCluster,
  REAL_NODE_BUILDS,
  startRegistryRelay,
} from "../builds/real-builds.ts";
import { LOCAL_START_PRINCIPAL } from "../clusters/register-local.ts";
import { SYSTEM_NS } from "../sessions/harness.ts";
import type { Service } from "./service.ts";

/** The operator's BERTH_OPERATOR_BUILDS_NODE_SELECTOR on the build cluster. */
export const LOCAL_BUILD_NODES = Object.entries(REAL_NODE_BUILDS)
  .map(([k, v]) => `${k}=${v}`)
  .join(",");

export function builderService(): Service {
  return {
    name: "builder",
    async start(ctx) {
      const node = ctx.fleet.realNodes[0];
      if (!node) {
        ctx.log("[builder] no real node: image builds stay off (no cluster of this fleet is marked for builds)");
        return { stop: async () => {} };
      }
      const registry = new URL(ctx.published.BERTH_REGISTRY_URL ?? "").host;
      const relay = await startRegistryRelay(ensureBridgeAddress(node), registry);
      try {
        node.trustRegistry(relay.host);
        ctx.log("[builder] the builder image (BuildKit from Go modules; a cold build takes several minutes)");
        const built = buildBuilderImage({ quiet: true });
        await pushBuilderImage(built, registry);
        const image = builderImageRef(relay.host, built.tag);
        ctx.log(
          `[builder] ${image} (${built.cached ? "from the cache" : `built in ${built.seconds.toFixed(0)} s`}, ${(built.layer.size / 2 ** 20).toFixed(1)} MiB)`,
        );
        return {
          endpoints: [{ name: "Berth's registry for pods", url: `http://${relay.host}` }],
          publish: {
            BERTH_REGISTRY_PULL_PREFIX: relay.host,
            BERTH_BUILDER_IMAGE: image,
            BERTH_LOCAL_BUILD_CLUSTER: node.cluster,
          },
          stop: () => relay.stop(),
        };
      } catch (e) {
        await relay.stop();
        throw e;
      }
    },
  };
}

export function buildClusterService(deps: () => Parameters<typeof markForBuilds>[0] | undefined): Service {
  return {
    name: "build-cluster",
    async start(ctx) {
      const name = ctx.published.BERTH_LOCAL_BUILD_CLUSTER;
      if (!name) return { stop: async () => {} };
      const d = deps();
      if (!d) throw new Error("the build cluster needs the API");
      const regs = JSON.parse(ctx.published.BERTH_LOCAL_CLUSTERS ?? "[]") as { cluster: string; clusterId: string }[];
      const reg = regs.find((r) => r.cluster === name);
      if (!reg) throw new Error(`the real node's cluster ${name} is not registered`);
      const cluster = ctx.fleet.clusters.find((c) => c.name === name);
      if (!cluster) throw new Error(`no cluster ${name} in the fleet`);
      await installBuildCluster(cluster, {
        // The service accounts registerLocalGpuClusters and installOperator mint.
        controlPlane: {
          name: "berth-control-plane",
          namespace: controlPlaneRbac().namespaceRules[0]?.namespace ?? "berth-system",
        },
        operator: { name: "berth-operator", namespace: SYSTEM_NS },
      });
      await markForBuilds(d, LOCAL_START_PRINCIPAL, reg.clusterId);
      return {
        endpoints: [{ name: "build cluster", url: `${name} (${reg.clusterId}), builds on its real node` }],
        stop: async () => {},
      };
    },
  };
}
