// A build cluster's wiring: the builds namespace admits the rootless builder (Pod Security `privileged`,
// warnings at `restricted`), the operator runs its build controller there with exactly
// operatorRbac({buildsNamespace}), and the control plane's account may write ImageBuilds there
// (buildClusterRbac()); a cluster without `builds` gets none of it. Berth's registry, when the control plane
// deploys it, is what the API and the worker push to.
import { buildClusterRbac } from "@berth/api/rbac";
import { operatorRbac } from "@berth/operator";
import { App, Chart } from "cdk8s";
import { describe, expect, it } from "vitest";
import { ControlPlane } from "./control-plane.ts";
import { ENVIRONMENTS } from "./environments.ts";
import { GpuCluster, type GpuClusterOptions } from "./gpu-cluster.ts";

// biome-ignore lint/suspicious/noExplicitAny: manifests as they come
type Obj = { kind: string; metadata: { name: string; namespace?: string; labels?: any }; spec?: any; rules?: any };

const prod = ENVIRONMENTS.production;
if (!prod) throw new Error("no production environment");
const gpuBase = Object.values(prod.gpuClusters)[0] as GpuClusterOptions;

function gpu(o: Partial<GpuClusterOptions>): Obj[] {
  const chart = new Chart(new App(), "c");
  new GpuCluster(chart, "gpu", { ...gpuBase, ...o });
  return chart.toJson() as Obj[];
}

const role = (objects: Obj[], name: string, ns: string) =>
  objects.find((o) => o.kind === "Role" && o.metadata.name === name && o.metadata.namespace === ns);
const operatorEnv = (objects: Obj[]) =>
  Object.fromEntries(
    (
      (objects.find((o) => o.kind === "Deployment" && o.metadata.name === "berth-operator") as Obj).spec.template.spec
        .containers[0].env as { name: string; value?: string }[]
    ).map((e) => [e.name, e.value]),
  );

describe("a build cluster", () => {
  it("gets the builds namespace, the operator's build controller and both accounts' build grants", () => {
    const objects = gpu({ builds: { namespace: "builds" } });
    const ns = objects.find((o) => o.kind === "Namespace" && o.metadata.name === "builds");
    expect(ns?.metadata.labels).toMatchObject({
      "pod-security.kubernetes.io/enforce": "privileged",
      "pod-security.kubernetes.io/warn": "restricted",
      "pod-security.kubernetes.io/audit": "restricted",
    });
    expect(operatorEnv(objects).BERTH_OPERATOR_BUILDS_NAMESPACE).toBe("builds");
    const want = operatorRbac({ buildsNamespace: "builds" }).namespaceRules.find((n) => n.namespace === "builds");
    expect(role(objects, "berth-operator", "builds")?.rules).toEqual(want?.rules);
    expect(role(objects, "berth-control-plane", "builds")?.rules).toEqual(
      buildClusterRbac("builds").namespaceRules[0]?.rules,
    );
    // The operator applies the namespace's egress policy itself (controllers/src/builds/manifests.ts).
    expect(objects.some((o) => o.kind === "NetworkPolicy" && o.metadata.namespace === "builds")).toBe(false);
  });

  it("is nothing of that without `builds`", () => {
    const objects = gpu({ builds: undefined });
    expect(objects.some((o) => o.metadata.namespace === "berth-builds" || o.metadata.name === "berth-builds")).toBe(
      false,
    );
    expect(operatorEnv(objects)).not.toHaveProperty("BERTH_OPERATOR_BUILDS_NAMESPACE");
  });
});

describe("the control plane's registry", () => {
  const env = (o: Partial<typeof prod.controlPlane>) => {
    const chart = new Chart(new App(), "c");
    new ControlPlane(chart, "cp", { ...prod.controlPlane, ...o });
    const objects = chart.toJson() as Obj[];
    const api = objects.find((x) => x.kind === "Deployment" && x.metadata.name === "berth-api");
    return { objects, env: api?.spec.template.spec.containers[0].env as { name: string; value?: string }[] };
  };

  it("deploys Berth's registry and points the API at it, with the credentials Secret", () => {
    const { objects, env: e } = env({});
    expect(objects.some((o) => o.kind === "StatefulSet" && o.metadata.name === "berth-registry")).toBe(true);
    expect(e).toContainEqual({ name: "BERTH_REGISTRY_URL", value: "https://berth-registry.berth-system.svc:5000" });
    expect(e).toContainEqual({ name: "BERTH_REGISTRY_PULL_PREFIX", value: "registry.berth.example.com" });
    expect(e).toContainEqual({
      name: "BERTH_REGISTRY_PASSWORD",
      valueFrom: { secretKeyRef: { name: "berth-registry-credentials", key: "password" } },
    });
    const svc = objects.find((o) => o.kind === "Service" && o.metadata.name === "berth-registry");
    expect(svc?.spec).toMatchObject({ type: "LoadBalancer", externalTrafficPolicy: "Local" });
  });

  it("takes an external registry's address instead, deploying nothing", () => {
    const { objects, env: e } = env({ registry: { external: { url: "https://registry.example.com" } } });
    expect(objects.some((o) => o.metadata.name === "berth-registry")).toBe(false);
    expect(e).toContainEqual({ name: "BERTH_REGISTRY_URL", value: "https://registry.example.com" });
    expect(e.some((x) => x.name === "BERTH_REGISTRY_USERNAME")).toBe(false);
  });
});
