// The environments the app synthesizes, each a set of charts applied in order: `crds` and
// `control-plane` to the management cluster, one `gpu-<name>` per GPU cluster to that cluster.
import { App, Chart } from "cdk8s";
import { ControlPlane, type ControlPlaneOptions } from "./control-plane.ts";
import { Crds } from "./crds.ts";
import { DEFAULT_BUILDS_NAMESPACE, GpuCluster, type GpuClusterOptions } from "./gpu-cluster.ts";
import { OptionError } from "./options.ts";

export interface Environment {
  controlPlane: ControlPlaneOptions;
  gpuClusters: Record<string, GpuClusterOptions>;
}

/** The test bed: one replica each, loopback ranges, the bed's local registry. */
const bedImage = { image: "127.0.0.1:5000/berth:dev" };
const testbed: Environment = {
  controlPlane: {
    image: bedImage,
    publicHost: "berth.localhost",
    api: { replicas: 1, maxReplicas: 2 },
    worker: { replicas: 1 },
    internal: { allowCidrs: ["127.0.0.0/8"] },
    database: { external: { secretName: "berth-database" } },
    metrics: { storageSize: "1Gi", retention: "7d" },
  },
  gpuClusters: {
    "gpu-a": {
      clusterId: "clu_gpu-a",
      controlPlaneUrl: "http://127.0.0.1:8081",
      image: bedImage,
      operator: { replicas: 1 },
      gateway: { sessionDomain: "gpu-a.sessions.localhost", replicas: 1, cookieKeySecretName: "berth-gateway-cookie" },
    },
  },
};

/**
 * `npm run bed:install` (e2e/src/install/): Berth installed as pods on the bed's real node, pulled from the
 * bed's registry at BED_REGISTRY, Postgres in the cluster. One cluster is the management cluster and the
 * GPU cluster at once: kube-proxy and kube-router are the host's, so one real node per host runs them
 * (docs/dev/real-node-network.md). Operators reach the internal listener by its Service from the node's
 * pod range; the policy admits only the namespace's operator and gateway pods.
 */
export const BED_REGISTRY = "127.0.0.1:5055";
/** The GPU cluster's name in `bed`; its clusterId is the one the install's registration answers. */
export const BED_GPU_CLUSTER = "bed";
/** The StorageClass of the bed's CSI driver on the real node (e2e/src/testbed/csi-hostpath.ts). */
export const BED_STORAGE_CLASS = "berth-hostpath";
const bedInstallImage = { image: `${BED_REGISTRY}/berth:bed`, pullPolicy: "Always" as const };
const bed: Environment = {
  controlPlane: {
    image: bedInstallImage,
    publicHost: "berth.localhost",
    api: { replicas: 2, maxReplicas: 3 },
    worker: { replicas: 2 },
    internal: { allowCidrs: ["10.234.0.0/16"], policyCidrs: [] },
    database: {
      inCluster: {
        image: { image: `${BED_REGISTRY}/berth/postgres:bed`, pullPolicy: "Always" },
        storageSize: "1Gi",
        storageClass: BED_STORAGE_CLASS,
      },
    },
    // The bed's own VictoriaMetrics build (e2e/testbed/build-metrics-server.sh), as a one-file image.
    metrics: {
      image: { image: `${BED_REGISTRY}/berth/victoria-metrics:bed`, pullPolicy: "Always" },
      storageSize: "1Gi",
      storageClass: BED_STORAGE_CLASS,
      retention: "7d",
    },
  },
  gpuClusters: {
    [BED_GPU_CLUSTER]: {
      clusterId: "clu_bed",
      controlPlaneUrl: "http://berth-internal.berth-system.svc:8081",
      image: bedInstallImage,
      operator: { replicas: 1 },
      gateway: { sessionDomain: "bed.sessions.localhost", replicas: 1, cookieKeySecretName: "berth-gateway-cookie" },
    },
  },
};

/** kind: clusters on one Docker network (172.18.0.0/16), Postgres by CloudNativePG. */
const kindImage = { image: "localhost:5001/berth:dev", pullPolicy: "IfNotPresent" as const };
function kindGpuCluster(name: string): GpuClusterOptions {
  return {
    clusterId: `clu_kind-${name}`,
    controlPlaneUrl: "http://berth-mgmt-control-plane:30081",
    image: kindImage,
    operator: { replicas: 2 },
    gateway: { sessionDomain: `${name}.sessions.localhost`, replicas: 1, cookieKeySecretName: "berth-gateway-cookie" },
  };
}
const kind: Environment = {
  controlPlane: {
    image: kindImage,
    publicHost: "berth.localhost",
    ingressClassName: "nginx",
    api: { replicas: 2, maxReplicas: 3 },
    worker: { replicas: 2 },
    internal: { allowCidrs: ["172.18.0.0/16"], serviceType: "LoadBalancer" },
    database: { cloudNativePg: { instances: 1, storageSize: "1Gi" } },
    metrics: { storageSize: "2Gi", retention: "7d" },
    // The provider's local registry (e2e/src/provider/kind.ts): pushed to by name on kind's network,
    // pulled as localhost:5001 through each node's containerd mirror.
    registry: { external: { url: "http://berth-kind-registry:5000", pullPrefix: "localhost:5001" } },
  },
  // The provider makes every GPU cluster of the bed's fleet and applies each one's chart.
  gpuClusters: { "gpu-a": kindGpuCluster("gpu-a"), "gpu-b": kindGpuCluster("gpu-b") },
};

/** Production: an example a platform team copies and edits (hosts, ranges, registry, ids). */
const prodImage = { image: "registry.example.com/berth/berth:0.1.0" };
const production: Environment = {
  controlPlane: {
    image: prodImage,
    publicHost: "berth.example.com",
    publicTlsSecretName: "berth-public-tls",
    ingressClassName: "nginx",
    // The cluster's pod range, where the ingress controller runs.
    trustedProxyCidrs: ["10.244.0.0/16"],
    api: { replicas: 3, maxReplicas: 10 },
    worker: { replicas: 2 },
    internal: { allowCidrs: ["10.20.0.0/16", "10.30.0.0/16"], serviceType: "LoadBalancer" },
    database: { external: { secretName: "berth-database" } },
    metrics: { storageSize: "50Gi", retention: "90d" },
    registry: {
      berth: {
        pullPrefix: "registry.berth.example.com",
        storageSize: "500Gi",
        tlsSecretName: "berth-registry-tls",
        htpasswdSecretName: "berth-registry-htpasswd",
        credentialsSecretName: "berth-registry-credentials",
        // The GPU clusters' node ranges (pulls; gpu-east's build pods push from there too).
        allowCidrs: ["10.20.0.0/16", "10.30.0.0/16"],
        serviceType: "LoadBalancer",
      },
    },
    // Build pods reach the registry's load balancer only (add package mirrors here).
    builds: { egressCidrs: ["10.10.0.0/24"] },
  },
  gpuClusters: {
    "gpu-east": {
      clusterId: "clu_gpu-east",
      controlPlaneUrl: "https://berth-internal.example.com:8081",
      image: prodImage,
      operator: { replicas: 2 },
      gateway: {
        sessionDomain: "east.sessions.example.com",
        replicas: 2,
        tlsSecretName: "berth-sessions-tls",
        cookieKeySecretName: "berth-gateway-cookie",
      },
      // A build cluster too: build Jobs land on its nodes without GPUs.
      builds: {},
    },
  },
};

export const ENVIRONMENTS: Record<string, Environment> = { testbed, bed, kind, production };

/** One environment's charts, in apply order: file name → chart. */
export function synthEnvironment(env: Environment): { file: string; chart: Chart }[] {
  const app = new App();
  const chart = (id: string) => new Chart(app, id, { disableResourceNameHashes: true });
  const crds = chart("crds");
  new Crds(crds, "crds");
  const cp = chart("control-plane");
  new ControlPlane(cp, "control-plane", env.controlPlane);
  const out = [
    { file: "00-crds.yaml", chart: crds },
    { file: "10-control-plane.yaml", chart: cp },
  ];
  const buildsNs = env.controlPlane.builds?.namespace ?? DEFAULT_BUILDS_NAMESPACE;
  for (const [name, o] of Object.entries(env.gpuClusters)) {
    // The worker writes every cluster's ImageBuilds into the one BERTH_BUILD_NAMESPACE.
    if (o.builds && (o.builds.namespace ?? DEFAULT_BUILDS_NAMESPACE) !== buildsNs)
      throw new OptionError(
        `gpuClusters.${name}.builds.namespace`,
        `"${o.builds.namespace ?? DEFAULT_BUILDS_NAMESPACE}" differs from controlPlane.builds.namespace ("${buildsNs}")`,
      );
    const c = chart(`gpu-${name}`);
    new GpuCluster(c, name, o);
    out.push({ file: `20-gpu-${name}.yaml`, chart: c });
  }
  return out;
}
