// biome-ignore-all lint/suspicious/noExplicitAny: the tests read kind's configuration as plain YAML
// The kind provider's configuration and commands, without Docker (these machines have none): the plan for
// a fleet, the runner's order and its refusals, and the clusters it hands the journeys. A fake runner
// answers as docker, kind and kubectl do.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import type { ClusterDescription, FleetDescription } from "../testbed/types.ts";
import { providerName, startFleet } from "./index.ts";
import { type Runner, serverAndCa, startKindFleet } from "./kind.ts";
import { bedVersions, KindUnsupported, kindClusterConfig, kindPlan, REGISTRY_CONTAINER } from "./kind-plan.ts";

const FLEET: FleetDescription = {
  clusters: [
    { name: "mgmt", kind: "management" },
    {
      name: "gpu-a",
      kind: "gpu",
      nodes: [
        { name: "gpu-a-1", gpuModel: "NVIDIA-H100-80GB-HBM3", gpuCount: 8, sharing: "hami" },
        { name: "gpu-a-2", gpuModel: "NVIDIA-H100-80GB-HBM3", gpuCount: 8, sharing: "hami" },
      ],
      gpuRuntimeClass: true,
      gpuDevicePlugin: "hami",
    },
    {
      name: "gpu-b",
      kind: "gpu",
      nodes: [{ name: "gpu-b-1", gpuModel: "NVIDIA-L4", gpuCount: 4 }],
      gpuDevicePlugin: true,
    },
  ],
};

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const dirs: string[] = [];
const workDir = () => {
  const d = mkdtempSync(join(tmpdir(), "berth-kind-test-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
const kubeconfigOf = (name: string, port: number) =>
  `apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: ${Buffer.from(CA).toString("base64")}\n    server: https://127.0.0.1:${port}\n  name: kind-${name}\n`;

/** Answers like the real tools; records every command. */
function fakeRunner(
  opts: { missing?: string[]; failOn?: RegExp; answer?: (argv: string[]) => string | undefined } = {},
) {
  const calls: string[][] = [];
  const run: Runner = async (argv) => {
    calls.push(argv);
    const line = argv.join(" ");
    if (opts.missing?.includes(argv[0] as string)) return { code: 127, stdout: "", stderr: "not found" };
    if (opts.failOn?.test(line)) return { code: 1, stdout: "", stderr: `boom: ${line}` };
    const custom = opts.answer?.(argv);
    if (custom !== undefined) return { code: 0, stdout: custom, stderr: "" };
    if (argv[0] === "kind" && argv[1] === "get")
      return { code: 0, stdout: kubeconfigOf(argv[4] as string, 6443), stderr: "" };
    if (line.endsWith("get --raw /readyz")) return { code: 0, stdout: "ok", stderr: "" };
    if (line.includes("create token")) return { code: 0, stdout: `token-of-${argv[2]}\n`, stderr: "" };
    return { code: 0, stdout: "", stderr: "" };
  };
  return { run, calls };
}

describe("BERTH_E2E_PROVIDER", () => {
  it("is the test bed unless it names kind, and refuses anything else", () => {
    expect(providerName({})).toBe("testbed");
    expect(providerName({ BERTH_E2E_PROVIDER: "" })).toBe("testbed");
    expect(providerName({ BERTH_E2E_PROVIDER: "kind" })).toBe("kind");
    expect(() => providerName({ BERTH_E2E_PROVIDER: "minikube" })).toThrow(/not a provider; use one of: testbed, kind/);
  });
});

describe("a kind cluster's configuration", () => {
  const o = { nodeImage: "kindest/node:v1.37.1", registryPort: 5001 };

  it("names the cluster, pins the node image, keeps the apiserver on loopback and reads registries from certs.d", () => {
    const c = kindClusterConfig({ name: "mgmt", kind: "management" }, o) as Record<string, any>;
    expect(c).toMatchObject({
      kind: "Cluster",
      apiVersion: "kind.x-k8s.io/v1alpha4",
      name: "berth-mgmt",
      networking: { apiServerAddress: "127.0.0.1", apiServerPort: 0 },
      nodes: [{ role: "control-plane", image: "kindest/node:v1.37.1", extraMounts: [] }],
    });
    expect(c.containerdConfigPatches[0]).toContain('config_path = "/etc/containerd/certs.d"');
    expect(c.nodes[0].kubeadmConfigPatches).toBeUndefined();
  });

  it("passes kube-apiserver flags through kubeadm and mounts the folders they name (an audit log)", () => {
    const c = kindClusterConfig(
      {
        name: "mgmt",
        kind: "management",
        extraArgs: { "kube-apiserver": ["--audit-policy-file=/tmp/a/policy.yaml", "--audit-log-path=/tmp/a/mgmt.log"] },
      },
      o,
    ) as Record<string, any>;
    expect(c.nodes[0].extraMounts).toEqual([{ hostPath: "/tmp/a", containerPath: "/tmp/a" }]);
    const patch = parse(c.nodes[0].kubeadmConfigPatches[0]);
    expect(patch.apiServer.extraArgs).toEqual({
      "audit-policy-file": "/tmp/a/policy.yaml",
      "audit-log-path": "/tmp/a/mgmt.log",
    });
    expect(patch.apiServer.extraVolumes).toEqual([
      { name: "berth-0", hostPath: "/tmp/a", mountPath: "/tmp/a", pathType: "DirectoryOrCreate" },
    ]);
  });

  it("refuses flags for components kind runs itself, and flags without a value, naming what it cannot give", () => {
    expect(() => kindClusterConfig({ name: "g", kind: "gpu", extraArgs: { kwok: ["--v=4"] } }, o)).toThrow(
      KindUnsupported,
    );
    expect(() => kindClusterConfig({ name: "g", kind: "gpu", extraArgs: { kwok: ["--v=4"] } }, o)).toThrow(/kwok on g/);
    expect(() =>
      kindClusterConfig({ name: "m", kind: "management", extraArgs: { "kube-apiserver": ["--profiling"] } }, o),
    ).toThrow(/--profiling/);
  });
});

describe("the plan for a fleet", () => {
  it("starts the registry, one kind cluster per entry, then wires the registry in and makes admin tokens", () => {
    const plan = kindPlan(FLEET, { workDir: workDir(), buildImage: false });
    const lines = plan.steps.map((s) => s.argv.join(" "));
    expect(lines[0]).toBe(
      `docker run -d --restart=always -p 127.0.0.1:5001:5000 --name ${REGISTRY_CONTAINER} registry:2`,
    );
    const creates = lines.filter((l) => l.startsWith("kind create cluster"));
    expect(creates).toHaveLength(3);
    const names = plan.steps
      .filter((s) => s.argv[1] === "create")
      .map((s) => parse(plan.files.get(s.argv[4] as string) as string).name);
    expect(names).toEqual(["berth-mgmt", "berth-gpu-a", "berth-gpu-b"]);
    const connect = lines.indexOf(`docker network connect kind ${REGISTRY_CONTAINER}`);
    expect(connect).toBeGreaterThan(lines.lastIndexOf(creates[2] as string));
    for (const c of ["mgmt", "gpu-a", "gpu-b"]) {
      expect(lines).toContain(`docker exec berth-${c}-control-plane mkdir -p /etc/containerd/certs.d/localhost:5001`);
      expect(lines).toContain(
        `kubectl --context kind-berth-${c} -n kube-system create token berth-e2e-admin --duration=24h`,
      );
    }
    const hosts = [...plan.files.entries()].find(([p]) => p.endsWith("registry-hosts.toml"))?.[1];
    expect(hosts).toBe(`[host."http://${REGISTRY_CONTAINER}:5000"]\n`);
    // Re-running on a machine where they exist is fine.
    expect(plan.steps[0]?.tolerate?.test("Conflict. The container name is already in use")).toBe(true);
  });

  it("installs kwok with the bed's stages in GPU clusters only, with the bed's nodes, runtime class and device plugin", () => {
    const plan = kindPlan(FLEET, { workDir: workDir(), buildImage: false });
    const lines = plan.steps.map((s) => s.argv.join(" "));
    const kwok = bedVersions().kwok;
    const kwokLines = lines.filter((l) => l.includes("kwok.yaml"));
    expect(kwokLines).toEqual([
      `kubectl --context kind-berth-gpu-a apply -f https://github.com/kubernetes-sigs/kwok/releases/download/${kwok}/kwok.yaml`,
      `kubectl --context kind-berth-gpu-b apply -f https://github.com/kubernetes-sigs/kwok/releases/download/${kwok}/kwok.yaml`,
    ]);
    const docsOf = (suffix: string) =>
      parseAllDocuments([...plan.files.entries()].find(([p]) => p.endsWith(suffix))?.[1] ?? "").map((d) => d.toJS());
    const stages = docsOf("gpu-a-kwok-stages.yaml");
    expect(stages.map((s) => s.metadata.name)).toEqual(
      expect.arrayContaining(["node-initialize", "pod-ready", "pod-delete"]),
    );
    const a = docsOf("gpu-a-gpu.yaml");
    expect(a.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      "RuntimeClass/nvidia",
      "DaemonSet/hami-device-plugin",
      "Node/gpu-a-1",
      "Node/gpu-a-2",
    ]);
    const node = a[2];
    expect(node.metadata.annotations["kwok.x-k8s.io/node"]).toBe("fake");
    expect(node.metadata.annotations["hami.io/node-nvidia-register"]).toBeTruthy();
    const b = docsOf("gpu-b-gpu.yaml");
    expect(b.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      "DaemonSet/nvidia-device-plugin-daemonset",
      "Node/gpu-b-1",
    ]);
    expect(lines).toContain(
      "kubectl --context kind-berth-gpu-b wait --for=condition=Ready --timeout=120s node/gpu-b-1",
    );
    expect(lines.some((l) => l.includes("kind-berth-mgmt") && l.includes("kwok"))).toBe(false);
  });

  it("builds and pushes Berth's image to the local registry, and installs from cdk8s/dist/kind when asked", () => {
    const plan = kindPlan(FLEET, { workDir: "/w", installBerth: true });
    const lines = plan.steps.map((s) => s.argv.join(" "));
    expect(lines).toContain(`node ${join(ROOT, "cdk8s/src/image/build.ts")} /w/image --tag dev`);
    expect(lines).toContain(
      `node ${join(ROOT, "cdk8s/src/image/push.ts")} /w/image localhost:5001/berth:dev --plain-http`,
    );
    const applies = lines.filter((l) => l.includes("cdk8s/dist/kind"));
    expect(applies.map((l) => l.replace(/.*cdk8s\/dist\/kind\//, "").concat(` ${l.split(" ")[2]}`))).toEqual([
      "00-crds.yaml kind-berth-mgmt",
      "10-control-plane.yaml kind-berth-mgmt",
      "20-gpu-gpu-a.yaml kind-berth-gpu-a",
      "20-gpu-gpu-b.yaml kind-berth-gpu-b",
    ]);
    expect(kindPlan(FLEET, { workDir: "/w" }).steps.some((s) => s.argv.join(" ").includes("cdk8s/dist"))).toBe(false);
    const withC = {
      clusters: [...FLEET.clusters, { ...(FLEET.clusters.at(-1) as ClusterDescription), name: "gpu-c" }],
    };
    expect(() => kindPlan(withC, { workDir: "/w", installBerth: true })).toThrow(
      /GPU cluster "gpu-c" needs its chart .*20-gpu-gpu-c\.yaml/,
    );
  });

  it("takes the bed's Kubernetes and kwok versions from its build script, the node image overridable", () => {
    expect(bedVersions("K8S_VERSION=v1.2.3\nKWOK_VERSION=v0.9.0\n")).toEqual({ kubernetes: "v1.2.3", kwok: "v0.9.0" });
    expect(() => bedVersions("nothing")).toThrow(/names no K8S_VERSION/);
    const plan = kindPlan({ clusters: [{ name: "m", kind: "management" }] }, { workDir: "/w", nodeImage: "my/node:1" });
    expect(parse([...plan.files.values()][0] as string).nodes[0].image).toBe("my/node:1");
  });
});

describe("starting a kind fleet", () => {
  it("says which tools are missing, and runs nothing", async () => {
    const { run, calls } = fakeRunner({ missing: ["docker", "kind"] });
    await expect(startKindFleet(FLEET, { run, workDir: workDir() })).rejects.toThrow(
      /BERTH_E2E_PROVIDER=kind needs docker, kind on PATH/,
    );
    expect(calls.some((c) => c[1] === "create")).toBe(false);
  });

  it("runs the plan in order and hands back clusters with the server, CA and admin token kind gave", async () => {
    const { run, calls } = fakeRunner();
    const fleet = await startKindFleet(FLEET, { run, workDir: workDir(), buildImage: false });
    const plan = kindPlan(FLEET, { workDir: "/x", buildImage: false });
    const ran = calls.filter((c) => !["version"].includes(c[1] as string) && c[1] !== "get");
    expect(ran.map((c) => c[0])).toEqual(plan.steps.map((s) => s.argv[0]));
    expect(fleet.clusters.map((c) => [c.name, c.kind, c.server, c.adminToken, c.caPem])).toEqual([
      ["mgmt", "management", "https://127.0.0.1:6443", "token-of-kind-berth-mgmt", CA],
      ["gpu-a", "gpu", "https://127.0.0.1:6443", "token-of-kind-berth-gpu-a", CA],
      ["gpu-b", "gpu", "https://127.0.0.1:6443", "token-of-kind-berth-gpu-b", CA],
    ]);
    await fleet.cluster("gpu-a").restartApiServer();
    expect(calls.slice(-2).map((c) => c.join(" "))).toEqual([
      "docker restart berth-gpu-a-control-plane",
      "kubectl --context kind-berth-gpu-a get --raw /readyz",
    ]);
    expect(() => fleet.cluster("nope")).toThrow(/no cluster "nope"/);
    await fleet.stop();
    expect(calls.filter((c) => c[0] === "kind" && c[1] === "delete").map((c) => c[4])).toEqual([
      "berth-mgmt",
      "berth-gpu-a",
      "berth-gpu-b",
    ]);
  });

  it("deletes the clusters it made when a step fails, and names the step", async () => {
    const { run, calls } = fakeRunner({ failOn: /kind-berth-gpu-a apply -f https/ });
    await expect(startKindFleet(FLEET, { run, workDir: workDir(), buildImage: false })).rejects.toThrow(
      /gpu-a: kwok in the cluster failed/,
    );
    expect(calls.filter((c) => c[0] === "kind" && c[1] === "delete").map((c) => c[4])).toEqual([
      "berth-mgmt",
      "berth-gpu-a",
      "berth-gpu-b",
    ]);
  });

  it("is what @berth/e2e's startFleet gives under BERTH_E2E_PROVIDER=kind", async () => {
    // No tools on PATH, so a machine with Docker and kind makes no clusters here: the provider's own
    // refusal shows the dispatch went to kind.
    vi.stubEnv("PATH", "");
    try {
      await expect(startFleet(FLEET, { provider: "kind" })).rejects.toThrow(/BERTH_E2E_PROVIDER=kind needs/);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("reads the server and CA from kind's kubeconfig", () => {
    expect(serverAndCa(kubeconfigOf("x", 41234))).toEqual({ server: "https://127.0.0.1:41234", caPem: CA });
    expect(() => serverAndCa("apiVersion: v1\n")).toThrow(/names no server/);
  });
});
