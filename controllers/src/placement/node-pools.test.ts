import { describe, expect, it } from "vitest";
import { avoidNodeLabelsOf } from "../sessions/dispatch.ts";
import { aSession } from "../sessions/session-builder.test-support.ts";
import { tenancyOf } from "../sessions/tenancy.ts";
import { computeCapacity, type InventoryNodeView } from "./capacity.ts";
import { CardPool } from "./cards.ts";
import { mayUseNode, nodePoolGrants } from "./constraints.ts";
import { planPlacement } from "./plan.ts";
import type { NodePoolRef, PlacementRequest } from "./types.ts";

const H100 = "NVIDIA-H100-80GB-HBM3";
const research: NodePoolRef = {
  id: "npl_research",
  clusterId: "clu_a",
  label: { key: "berth.dev/pool", values: ["research"] },
  grantees: ["organization:org_lab"],
};
const teaching: NodePoolRef = { ...research, id: "npl_teaching", grantees: ["project:prj_course"] };
/** A PI's own nodes, granted to her alone. */
const pisNodes: NodePoolRef = {
  id: "npl_pi",
  clusterId: "clu_a",
  label: { key: "berth.dev/pool", values: ["pi-lee"] },
  grantees: ["user:usr_lee"],
};

const aNode = (name: string, gpus: number, over: Partial<InventoryNodeView> = {}): InventoryNodeView => ({
  clusterId: "clu_a",
  name,
  gpuModel: H100,
  gpuAllocatable: gpus,
  gpuInUse: 0,
  schedulable: true,
  ready: true,
  ...over,
});

const aRequest = (name: string, tenancy: PlacementRequest["tenancy"], gpuCount = 1): PlacementRequest => ({
  key: `ns/${name}`,
  gpuModel: H100,
  gpuCount,
  priority: 0,
  since: "2026-11-29T00:00:00Z",
  volumes: [],
  ...(tenancy ? { tenancy } : {}),
});

describe("who may use a node", () => {
  it("lets anyone use a node in no pool, and a pool's node only its grantees", () => {
    expect(mayUseNode({ organization: "org_x" }, undefined)).toBe(true);
    expect(mayUseNode({ organization: "org_lab" }, [research])).toBe(true);
    expect(mayUseNode({ organization: "org_x" }, [research])).toBe(false);
    expect(mayUseNode({ organization: "org_x", project: "prj_course" }, [teaching])).toBe(true);
    expect(mayUseNode(undefined, [research])).toBe(false);
  });

  it("reads a node in two pools as usable only by those granted both", () => {
    expect(mayUseNode({ organization: "org_lab" }, [research, teaching])).toBe(false);
    expect(mayUseNode({ organization: "org_lab", project: "prj_course" }, [research, teaching])).toBe(true);
  });
});

describe("a pool granted to one person", () => {
  // The PI and her student work in the same organization and project.
  const lee = { organization: "org_lab", project: "prj_thesis", user: "usr_lee" };
  const student = { organization: "org_lab", project: "prj_thesis", user: "usr_kim" };

  it("is open to that person's sessions and closed to a colleague's in the same project", () => {
    expect(mayUseNode(lee, [pisNodes])).toBe(true);
    expect(mayUseNode(student, [pisNodes])).toBe(false);
    expect(mayUseNode({ organization: "org_lab", project: "prj_thesis" }, [pisNodes])).toBe(false);
  });

  it("places her session on the pool, and her colleague's only on the open nodes", () => {
    const clusters = computeCapacity(
      [{ clusterId: "clu_a", placeable: true }],
      [aNode("open-1", 2), aNode("lee-1", 8, { pools: [pisNodes] })],
      [],
    );
    const plan = planPlacement({
      requests: [aRequest("lee", lee, 4), aRequest("kim", student, 4)],
      clusters,
      policy: "binpack",
    });
    expect(plan.placed.map((p) => p.key)).toEqual(["ns/lee"]);
    expect(plan.waiting).toEqual([expect.objectContaining({ key: "ns/kim", reason: "NodePoolReserved" })]);
  });

  it("keeps a colleague's pod off the pool's nodes, and not hers", () => {
    const mine = aSession("ses-lee").build();
    mine.spec.owner = "usr_lee";
    const theirs = structuredClone(mine);
    theirs.spec.owner = "usr_kim";
    expect(tenancyOf(mine)).toMatchObject({ user: "usr_lee", organization: mine.spec.organization });
    expect(avoidNodeLabelsOf([pisNodes], "clu_a", mine)).toEqual({});
    expect(avoidNodeLabelsOf([pisNodes], "clu_a", theirs)).toEqual({
      avoidNodeLabels: [{ key: "berth.dev/pool", values: ["pi-lee"] }],
    });
  });
});

describe("placement with node pools", () => {
  const nodes = [aNode("open-1", 2), aNode("pool-1", 8, { pools: [research] })];
  const clusters = computeCapacity([{ clusterId: "clu_a", placeable: true }], nodes, []);

  it("never places another organization's session on the pool's room", () => {
    // 10 GPUs free on the cluster, 2 of them open: a 4-GPU session of another organization cannot go.
    const plan = planPlacement({
      requests: [aRequest("other", { organization: "org_x" }, 4)],
      clusters,
      policy: "binpack",
    });
    expect(plan.placed).toEqual([]);
    expect(plan.waiting[0]).toMatchObject({ reason: "NodePoolReserved" });
  });

  it("places the grantee's session there, and others on the open nodes", () => {
    const plan = planPlacement({
      requests: [aRequest("lab", { organization: "org_lab" }, 4), aRequest("other", { organization: "org_x" }, 2)],
      clusters,
      policy: "binpack",
    });
    expect(plan.placed.map((p) => p.key).sort()).toEqual(["ns/lab", "ns/other"]);
  });

  it("tells a full open part from a reserved one", () => {
    const busy = computeCapacity(
      [{ clusterId: "clu_a", placeable: true }],
      [aNode("open-1", 2, { gpuInUse: 2 }), aNode("pool-1", 8, { pools: [research] })],
      [],
    );
    expect(nodePoolGrants.exclude(aRequest("other", { organization: "org_x" }), busy[0] as never)).toMatchObject({
      reason: "NoCapacity",
    });
  });

  it("costs nothing on a cluster without pools", () => {
    const plain = computeCapacity([{ clusterId: "clu_a", placeable: true }], [aNode("open-1", 2)], []);
    expect(plain[0]?.nodeGroups).toBeUndefined();
  });

  it("skips the pool's nodes when choosing cards for a session of others", () => {
    const card = (uuid: string) => ({
      uuid,
      memoryMib: 81920,
      cores: 100,
      split: 4,
      healthy: true,
      memoryUsedMib: 0,
      coresUsed: 0,
      vgpusUsed: 0,
    });
    const shared = [
      aNode("open-1", 1, { sharing: "hami", cards: [card("GPU-open")] }),
      aNode("pool-1", 1, { sharing: "hami", cards: [card("GPU-pool")], pools: [research] }),
    ];
    const cards = new CardPool(shared, []);
    const demand = { gpuModel: H100, gpuCount: 1, slice: { memoryMib: 20480, cores: 25 } };
    for (let i = 0; i < 4; i++) {
      const a = cards.choose("clu_a", { ...demand, tenancy: { organization: "org_x" } }, "binpack");
      expect(a?.node).toBe("open-1");
      if (a) cards.take("clu_a", demand, a);
    }
    expect(cards.choose("clu_a", { ...demand, tenancy: { organization: "org_x" } }, "binpack")).toBeUndefined();
    expect(cards.choose("clu_a", { ...demand, tenancy: { organization: "org_lab" } }, "binpack")?.node).toBe("pool-1");
  });
});
