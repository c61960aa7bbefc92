import { describe, expect, it } from "vitest";
import { buildJob } from "./manifests.ts";

const build = (insecureRegistry: boolean) => ({
  metadata: { name: "build-1", uid: "u-1" },
  spec: {
    buildId: "bld-1",
    cluster: "clu_1",
    dockerfile: "FROM scratch\n",
    destination: "10.234.0.1:5000/org/app:1",
    insecureRegistry,
    builderImage: "10.234.0.1:5000/berth/builder:1",
    timeoutSeconds: 600,
    egressCidrs: [],
  },
});

// biome-ignore lint/suspicious/noExplicitAny: reads a plain manifest
const pod = (job: any) => job.spec.template.spec;

describe("the build Job", () => {
  it("keeps off GPU nodes unless the operator names the build nodes, whose own taint it then tolerates", () => {
    const terms = (j: unknown) =>
      pod(j).affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms;
    // biome-ignore lint/suspicious/noExplicitAny: the spec's other fields do not matter here
    const b = build(false) as any;
    expect(terms(buildJob(b, "berth-builds"))).toEqual([
      { matchExpressions: [{ key: "nvidia.com/gpu.count", operator: "DoesNotExist" }] },
    ]);
    expect(terms(buildJob(b, "berth-builds", { "berth.dev/real-node": "true" }))).toEqual([
      { matchExpressions: [{ key: "berth.dev/real-node", operator: "In", values: ["true"] }] },
    ]);
    // A pool tainted with its own label is tolerated; without a selector, no toleration.
    expect(pod(buildJob(b, "berth-builds", { "berth.dev/real-node": "true" })).tolerations).toEqual([
      { key: "berth.dev/real-node", operator: "Equal", value: "true", effect: "NoSchedule" },
    ]);
    expect(pod(buildJob(b, "berth-builds")).tolerations).toBeUndefined();
  });

  it("names a plain-HTTP registry to the builder, for the base image's pull as well as the push", () => {
    // biome-ignore lint/suspicious/noExplicitAny: the spec's other fields do not matter here
    const c = (insecure: boolean) => pod(buildJob(build(insecure) as any, "berth-builds")).containers[0];
    expect(c(true).env).toContainEqual({ name: "BERTH_INSECURE_REGISTRIES", value: "10.234.0.1:5000" });
    expect(c(true).args[1]).toContain("registry.insecure=true");
    expect(c(false).env.map((e: { name: string }) => e.name)).toEqual(["BUILDKITD_FLAGS"]);
  });
});
