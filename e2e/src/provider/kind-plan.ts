import { existsSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import {
  devicePluginManifest,
  gpuNodeManifest,
  hamiDevicePluginManifest,
  runtimeClassManifest,
} from "../testbed/gpu.ts";
import { kwokStages } from "../testbed/kwok.ts";
import type { ClusterDescription, FleetDescription } from "../testbed/types.ts";

export class KindUnsupported extends Error {
  constructor(what: string, why: string) {
    super(`the kind provider cannot give ${what}: ${why}`);
    this.name = "KindUnsupported";
  }
}

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const BUILD_SCRIPT = join(ROOT, "e2e/testbed/build-binaries.sh");

/** Versions the bed is built from (e2e/testbed/build-binaries.sh), so both providers run the same Kubernetes. */
export function bedVersions(script = readFileSync(BUILD_SCRIPT, "utf8")): { kubernetes: string; kwok: string } {
  const v = (name: string) => {
    const m = new RegExp(`^${name}=(\\S+)$`, "m").exec(script);
    if (!m?.[1]) throw new Error(`${BUILD_SCRIPT} names no ${name}`);
    return m[1];
  };
  return { kubernetes: v("K8S_VERSION"), kwok: v("KWOK_VERSION") };
}

export interface KindOptions {
  /** Where the plan's files go. */
  workDir: string;
  /** The node image; default kindest/node:<the bed's Kubernetes version> (BERTH_KIND_NODE_IMAGE overrides). */
  nodeImage?: string;
  /** kwok's release; default the bed's. */
  kwokVersion?: string;
  /** The local registry's host port; default 5001 (cdk8s' kind environment pulls localhost:5001/berth:dev). */
  registryPort?: number;
  /** Build Berth's image and push it to the local registry. Default true. */
  buildImage?: boolean;
  /** Apply cdk8s/dist/kind (CRDs, control plane, each GPU cluster's chart that exists). Default false: the journeys run Berth on the host. */
  installBerth?: boolean;
}

export const REGISTRY_CONTAINER = "berth-kind-registry";
export const ADMIN_ACCOUNT = "berth-e2e-admin";
export const kindName = (cluster: string) => `berth-${cluster}`;
export const kindContext = (cluster: string) => `kind-${kindName(cluster)}`;

/** A command of the plan. `tolerate`: a failure whose output matches is fine (already there). */
export interface Step {
  why: string;
  argv: string[];
  tolerate?: RegExp;
  /** The step's standard output is this cluster's admin token. */
  tokenOf?: string;
}

export interface KindPlan {
  /** Files to write before running (path → text). */
  files: Map<string, string>;
  steps: Step[];
}

/** kind's cluster configuration: one control-plane node, the registry mirror, the apiserver flags asked for. */
export function kindClusterConfig(desc: ClusterDescription, o: { nodeImage: string; registryPort: number }): object {
  const apiserverArgs = desc.extraArgs?.["kube-apiserver"] ?? [];
  const others = Object.entries(desc.extraArgs ?? {}).filter(
    ([k, v]) => k !== "kube-apiserver" && (v?.length ?? 0) > 0,
  );
  if (others.length > 0)
    throw new KindUnsupported(
      `extra flags for ${others.map(([k]) => k).join(", ")} on ${desc.name}`,
      "kind runs those components inside its node; only kube-apiserver flags are passed (kubeadm extraArgs)",
    );
  const flags = apiserverArgs.map((a) => {
    const m = /^--([^=]+)=(.*)$/.exec(a);
    if (!m) throw new KindUnsupported(`the kube-apiserver flag "${a}"`, "only --name=value flags map to kubeadm");
    return { name: m[1] as string, value: m[2] as string };
  });
  // A flag naming a file (an audit policy, its log) needs that folder inside the node, at the same path.
  const folders = [...new Set(flags.filter((f) => isAbsolute(f.value)).map((f) => dirname(f.value)))];
  return {
    kind: "Cluster",
    apiVersion: "kind.x-k8s.io/v1alpha4",
    name: kindName(desc.name),
    networking: { apiServerAddress: "127.0.0.1", apiServerPort: 0 },
    containerdConfigPatches: [
      `[plugins."io.containerd.grpc.v1.cri".registry]\n  config_path = "/etc/containerd/certs.d"`,
    ],
    nodes: [
      {
        role: "control-plane",
        image: o.nodeImage,
        extraMounts: folders.map((f) => ({ hostPath: f, containerPath: f })),
        ...(flags.length > 0
          ? {
              kubeadmConfigPatches: [
                stringify({
                  kind: "ClusterConfiguration",
                  apiServer: {
                    extraArgs: Object.fromEntries(flags.map((f) => [f.name, f.value])),
                    extraVolumes: folders.map((f, i) => ({
                      name: `berth-${i}`,
                      hostPath: f,
                      mountPath: f,
                      pathType: "DirectoryOrCreate",
                    })),
                  },
                }),
              ],
            }
          : {}),
      },
    ],
  };
}

const yamlDocs = (docs: object[]) => docs.map((d) => stringify(d, { lineWidth: 0 })).join("---\n");

/** Everything the kind provider does for a fleet, in order. Pure: nothing runs here. */
export function kindPlan(fleet: FleetDescription, o: KindOptions): KindPlan {
  const versions = bedVersions();
  const nodeImage = o.nodeImage ?? process.env.BERTH_KIND_NODE_IMAGE ?? `kindest/node:${versions.kubernetes}`;
  const kwok = o.kwokVersion ?? versions.kwok;
  const port = o.registryPort ?? 5001;
  const files = new Map<string, string>();
  const steps: Step[] = [];
  const file = (name: string, text: string) => {
    const p = join(o.workDir, name);
    files.set(p, text);
    return p;
  };
  const kubectl = (cluster: string, ...args: string[]) => ["kubectl", "--context", kindContext(cluster), ...args];
  const already = /already exists|AlreadyExists|already connected|endpoint with name .* already exists/;

  steps.push({
    why: "the local registry the clusters pull Berth's image from",
    argv: [
      "docker",
      "run",
      "-d",
      "--restart=always",
      "-p",
      `127.0.0.1:${port}:5000`,
      "--name",
      REGISTRY_CONTAINER,
      "registry:2",
    ],
    tolerate: /already in use/,
  });
  for (const c of fleet.clusters) {
    const config = file(`${kindName(c.name)}.yaml`, stringify(kindClusterConfig(c, { nodeImage, registryPort: port })));
    steps.push({
      why: `${c.name}: the kind cluster`,
      argv: ["kind", "create", "cluster", "--config", config, "--wait", "120s"],
    });
  }
  steps.push({
    why: "the registry on kind's network",
    argv: ["docker", "network", "connect", "kind", REGISTRY_CONTAINER],
    tolerate: already,
  });
  // containerd in each node: localhost:<port> is the registry container, by name on kind's network.
  const hosts = `[host."http://${REGISTRY_CONTAINER}:5000"]\n`;
  const hostsFile = file("registry-hosts.toml", hosts);
  const registryConfigMap = file(
    "local-registry-hosting.yaml",
    yamlDocs([
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "local-registry-hosting", namespace: "kube-public" },
        data: {
          "localRegistryHosting.v1": `host: "localhost:${port}"\nhelp: "https://kind.sigs.k8s.io/docs/user/local-registry/"\n`,
        },
      },
    ]),
  );
  for (const c of fleet.clusters) {
    const node = `${kindName(c.name)}-control-plane`;
    const dir = `/etc/containerd/certs.d/localhost:${port}`;
    steps.push({ why: `${c.name}: the registry mirror folder`, argv: ["docker", "exec", node, "mkdir", "-p", dir] });
    steps.push({
      why: `${c.name}: the registry mirror`,
      argv: ["docker", "cp", hostsFile, `${node}:${dir}/hosts.toml`],
    });
    steps.push({
      why: `${c.name}: announce the registry (KEP-1755)`,
      argv: kubectl(c.name, "apply", "-f", registryConfigMap),
    });
    // An admin token for the harness (the bed's clusters hand one out; kind's kubeconfig holds a client certificate).
    steps.push({
      why: `${c.name}: the harness's admin account`,
      argv: kubectl(c.name, "-n", "kube-system", "create", "serviceaccount", ADMIN_ACCOUNT),
      tolerate: already,
    });
    steps.push({
      why: `${c.name}: the harness's admin account is cluster-admin`,
      argv: kubectl(
        c.name,
        "create",
        "clusterrolebinding",
        ADMIN_ACCOUNT,
        "--clusterrole=cluster-admin",
        `--serviceaccount=kube-system:${ADMIN_ACCOUNT}`,
      ),
      tolerate: already,
    });
    steps.push({
      why: `${c.name}: the harness's admin token`,
      argv: kubectl(c.name, "-n", "kube-system", "create", "token", ADMIN_ACCOUNT, "--duration=24h"),
      tokenOf: c.name,
    });
    if (c.kind !== "gpu") continue;
    const release = `https://github.com/kubernetes-sigs/kwok/releases/download/${kwok}`;
    steps.push({ why: `${c.name}: kwok in the cluster`, argv: kubectl(c.name, "apply", "-f", `${release}/kwok.yaml`) });
    steps.push({
      why: `${c.name}: kwok's stages (the bed's: nodes Ready, pods Running, deletes)`,
      argv: kubectl(c.name, "apply", "-f", file(`${c.name}-kwok-stages.yaml`, yamlDocs(kwokStages()))),
    });
    steps.push({
      why: `${c.name}: kwok runs`,
      argv: kubectl(c.name, "-n", "kube-system", "rollout", "status", "deployment/kwok-controller", "--timeout=120s"),
    });
    const gpuObjects: object[] = [
      ...(c.gpuRuntimeClass ? [runtimeClassManifest()] : []),
      ...(c.gpuDevicePlugin === "hami"
        ? [hamiDevicePluginManifest()]
        : c.gpuDevicePlugin
          ? [devicePluginManifest()]
          : []),
      ...(c.nodes ?? []).map((n) => gpuNodeManifest(n)),
    ];
    if (gpuObjects.length > 0)
      steps.push({
        why: `${c.name}: GPU nodes (kwok), the stub runtime class and device plugin`,
        argv: kubectl(c.name, "apply", "--server-side", "-f", file(`${c.name}-gpu.yaml`, yamlDocs(gpuObjects))),
      });
    if ((c.nodes ?? []).length > 0)
      steps.push({
        why: `${c.name}: GPU nodes Ready`,
        argv: kubectl(
          c.name,
          "wait",
          "--for=condition=Ready",
          "--timeout=120s",
          ...(c.nodes ?? []).map((n) => `node/${n.name}`),
        ),
      });
  }
  if (o.buildImage ?? true) {
    const layout = join(o.workDir, "image");
    steps.push({
      why: "Berth's image, without Docker",
      argv: ["node", join(ROOT, "cdk8s/src/image/build.ts"), layout, "--tag", "dev"],
    });
    steps.push({
      why: "Berth's image in the local registry",
      argv: ["node", join(ROOT, "cdk8s/src/image/push.ts"), layout, `localhost:${port}/berth:dev`, "--plain-http"],
    });
  }
  if (o.installBerth) {
    const dist = join(ROOT, "cdk8s/dist/kind");
    const mgmt = fleet.clusters.find((c) => c.kind === "management");
    if (!mgmt) throw new Error("installing Berth needs a management cluster in the fleet");
    for (const f of ["00-crds.yaml", "10-control-plane.yaml"])
      steps.push({ why: `Berth: ${f}`, argv: kubectl(mgmt.name, "apply", "--server-side", "-f", join(dist, f)) });
    for (const c of fleet.clusters.filter((x) => x.kind === "gpu")) {
      const chart = join(dist, `20-gpu-${c.name}.yaml`);
      // Refused before any cluster is made, not half-way through the install.
      if (!existsSync(chart))
        throw new Error(
          `installing Berth on GPU cluster "${c.name}" needs its chart ${chart}: add "${c.name}" to the kind environment's gpuClusters (cdk8s/src/environments.ts) and run npm run synth -w cdk8s`,
        );
      steps.push({
        why: `Berth on ${c.name}: its chart`,
        argv: kubectl(c.name, "apply", "--server-side", "-f", chart),
      });
    }
  }
  return { files, steps };
}

/** What only the bed can do, asked of a kind cluster. */
