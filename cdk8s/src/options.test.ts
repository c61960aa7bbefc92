// Options that make no sense stop the synth with a message naming the option, never a broken manifest.
import { App, Chart } from "cdk8s";
import { describe, expect, it } from "vitest";
import { ControlPlane, type ControlPlaneOptions } from "./control-plane.ts";
import { ENVIRONMENTS, synthEnvironment } from "./environments.ts";
import { GpuCluster, type GpuClusterOptions } from "./gpu-cluster.ts";
import { OptionError } from "./options.ts";

const base = ENVIRONMENTS.production;
if (!base) throw new Error("no production environment");
const cpBase = base.controlPlane;
const gpuBase = Object.values(base.gpuClusters)[0] as GpuClusterOptions;

const chart = () => new Chart(new App(), "c");
// biome-ignore lint/suspicious/noExplicitAny: manifests as they come
type Json = any;

function controlPlaneError(o: Partial<ControlPlaneOptions>): OptionError {
  try {
    new ControlPlane(chart(), "cp", { ...cpBase, ...o });
  } catch (e) {
    if (e instanceof OptionError) return e;
    throw e;
  }
  throw new Error("synthesized without complaint");
}

function gpuError(o: Partial<GpuClusterOptions>): OptionError {
  try {
    new GpuCluster(chart(), "gpu", { ...gpuBase, ...o });
  } catch (e) {
    if (e instanceof OptionError) return e;
    throw e;
  }
  throw new Error("synthesized without complaint");
}

describe("control plane options", () => {
  it.each([
    ["a public host with a scheme", { publicHost: "https://berth.example.com" }, "publicHost"],
    ["zero API replicas", { api: { replicas: 0, maxReplicas: 3 } }, "api.replicas"],
    ["fewer autoscaler replicas than at rest", { api: { replicas: 3, maxReplicas: 2 } }, "api.maxReplicas"],
    ["zero worker replicas", { worker: { replicas: 0 } }, "worker.replicas"],
    ["a CIDR that does not parse", { internal: { allowCidrs: ["10.0.0.0/33"] } }, "internal.allowCidrs[0]"],
    ["an address without a prefix", { internal: { allowCidrs: ["10.1.2.3"] } }, "internal.allowCidrs[0]"],
    ["no internal range at all", { internal: { allowCidrs: [] } }, "internal.allowCidrs"],
    [
      "a policy range that does not parse",
      { internal: { allowCidrs: ["10.0.0.0/8"], policyCidrs: ["10.0.0.0/33"] } },
      "internal.policyCidrs[0]",
    ],
    ["a metrics volume without a unit", { metrics: { storageSize: "50" } }, "metrics.storageSize"],
    [
      "a metrics retention that is not a period",
      { metrics: { storageSize: "5Gi", retention: "forever" } },
      "metrics.retention",
    ],
    ["a trusted proxy range that does not parse", { trustedProxyCidrs: ["10.244.0.0"] }, "trustedProxyCidrs[0]"],
    [
      "both an external database and CloudNativePG",
      { database: { external: { secretName: "db" }, cloudNativePg: { instances: 3, storageSize: "20Gi" } } },
      "database",
    ],
    ["no database", { database: {} }, "database"],
    [
      "an in-cluster Postgres beside an external database",
      { database: { external: { secretName: "db" }, inCluster: { image: { image: "r.example.com/pg:15" } } } },
      "database",
    ],
    [
      "an in-cluster Postgres image that is no reference",
      { database: { inCluster: { image: { image: "pg 15" } } } },
      "database.inCluster.image.image",
    ],
    [
      "an in-cluster Postgres Secret that is no name",
      { database: { inCluster: { image: { image: "r.example.com/pg:15" }, secretName: "Berth_DB" } } },
      "database.inCluster.secretName",
    ],
    [
      "a CloudNativePG size without a unit",
      { database: { cloudNativePg: { instances: 3, storageSize: "20" } } },
      "database.cloudNativePg.storageSize",
    ],
    ["an image with spaces", { image: { image: "berth latest" } }, "image.image"],
    ["a namespace with capitals", { namespace: "Berth" }, "namespace"],
    ["a builds namespace with capitals", { builds: { namespace: "Builds" } }, "builds.namespace"],
    ["a build egress range that does not parse", { builds: { egressCidrs: ["10.0.0.0"] } }, "builds.egressCidrs[0]"],
    [
      "both an external registry and Berth's",
      { registry: { external: { url: "https://r.example.com" }, berth: cpBase.registry?.berth } },
      "registry",
    ],
    ["a registry choice that chooses nothing", { registry: {} }, "registry"],
    [
      "an external registry URL without a scheme",
      { registry: { external: { url: "r.example.com" } } },
      "registry.external.url",
    ],
    [
      "an external registry pull prefix with a scheme",
      { registry: { external: { url: "https://r.example.com", pullPrefix: "https://r.example.com" } } },
      "registry.external.pullPrefix",
    ],
    [
      "an external registry's secret name that is not a DNS label",
      { registry: { external: { url: "https://r.example.com", credentialsSecretName: "Creds" } } },
      "registry.external.credentialsSecretName",
    ],
    [
      "Berth's registry with a size it cannot use",
      { registry: { berth: { ...cpBase.registry?.berth, storageSize: "lots" } } },
      "registry.berth.storageSize",
    ],
    [
      "Berth's registry with a secret name that is not a DNS label",
      { registry: { berth: { ...cpBase.registry?.berth, credentialsSecretName: "Creds" } } },
      "registry.berth.credentialsSecretName",
    ],
  ] as const)("refuse %s", (_, o, option) => {
    const e = controlPlaneError(o as Partial<ControlPlaneOptions>);
    expect(e.option).toBe(option);
    expect(e.message.startsWith(`${option}: `)).toBe(true);
  });

  it("accept IPv6 ranges and CloudNativePG alone", () => {
    expect(
      () =>
        new ControlPlane(chart(), "cp", {
          ...cpBase,
          internal: { allowCidrs: ["fd00::/8", "10.0.0.0/8"] },
          database: { cloudNativePg: { instances: 3, storageSize: "20Gi" } },
        }),
    ).not.toThrow();
  });

  it("with no policy ranges, leave the internal port to the namespace's operator and gateway pods", () => {
    const c = chart();
    new ControlPlane(c, "cp", { ...cpBase, internal: { allowCidrs: ["10.244.0.0/16"], policyCidrs: [] } });
    const policy = c.toJson().find((o: Json) => o.kind === "NetworkPolicy" && o.metadata.name === "berth-api");
    const internal = policy.spec.ingress.find((r: Json) => r.ports.some((p: Json) => p.port === 8081));
    expect(internal.from.map((f: Json) => f.podSelector?.matchLabels["app.kubernetes.io/name"])).toEqual([
      "berth-operator",
      "berth-gateway",
    ]);
    // The API's own gate keeps the range.
    const api = c.toJson().find((o: Json) => o.kind === "Deployment" && o.metadata.name === "berth-api");
    expect(api.spec.template.spec.containers[0].env).toContainEqual({
      name: "BERTH_INTERNAL_ALLOW_CIDRS",
      value: "10.244.0.0/16",
    });
  });
});

describe("GPU cluster options", () => {
  it.each([
    [
      "a session domain that is not a host name",
      { gateway: { ...gpuBase.gateway, sessionDomain: "sessions_example com" } },
      "gateway.sessionDomain",
    ],
    [
      "a session domain with a path",
      { gateway: { ...gpuBase.gateway, sessionDomain: "example.com/sessions" } },
      "gateway.sessionDomain",
    ],
    ["zero gateway replicas", { gateway: { ...gpuBase.gateway, replicas: 0 } }, "gateway.replicas"],
    ["zero operator replicas", { operator: { replicas: 0 } }, "operator.replicas"],
    ["half an operator replica", { operator: { replicas: 1.5 } }, "operator.replicas"],
    [
      "an egress range that does not parse",
      { operator: { replicas: 2, sessionEgressAllow: ["10.0.0.300/24"] } },
      "operator.sessionEgressAllow[0]",
    ],
    ["a cluster id of another kind", { clusterId: "gpu-east" }, "clusterId"],
    ["a control plane URL without a scheme", { controlPlaneUrl: "berth-internal:8081" }, "controlPlaneUrl"],
    ["sessions in the system namespace", { sessionsNamespace: "berth-system" }, "sessionsNamespace"],
    ["a builds namespace that is not a DNS label", { builds: { namespace: "berth_builds" } }, "builds.namespace"],
    ["builds in the sessions namespace", { builds: { namespace: "berth-sessions" } }, "builds.namespace"],
    ["builds in the system namespace", { builds: { namespace: "berth-system" } }, "builds.namespace"],
  ] as const)("refuse %s", (_, o, option) => {
    const e = gpuError(o as Partial<GpuClusterOptions>);
    expect(e.option).toBe(option);
    expect(e.message).toContain(option);
  });
});

describe("an environment", () => {
  it("refuses a build cluster whose builds namespace is not the control plane's", () => {
    const env = {
      ...base,
      gpuClusters: { "gpu-east": { ...gpuBase, builds: { namespace: "other-builds" } } },
    };
    expect(() => synthEnvironment(env)).toThrow(
      'gpuClusters.gpu-east.builds.namespace: "other-builds" differs from controlPlane.builds.namespace ("berth-builds")',
    );
  });
});
