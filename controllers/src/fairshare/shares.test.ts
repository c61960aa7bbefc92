import { describe, expect, it } from "vitest";
import type { ClusterCapacity } from "../placement/types.ts";
import {
  assertShareTree,
  cardEquivalents,
  checkSatisfiable,
  checkShareTree,
  classifyRequest,
  fleetCapacity,
  resolveSettings,
} from "./shares.ts";
import { type ClassRequest, FairShareInvalid, type Holder, type ShareTree } from "./types.ts";

const H100 = "NVIDIA-H100-80GB-HBM3";
const L4 = "NVIDIA-L4";

function aHolder(key: string, over: Partial<Holder> = {}): Holder {
  return {
    key,
    org: "a",
    project: "p",
    user: "u",
    clusterId: "c1",
    gpuModel: H100,
    cards: 1,
    capacityClass: "guaranteed",
    priority: 0,
    startedAt: "2026-11-28T10:00:00.000Z",
    idle: false,
    ...over,
  };
}

function aRequest(over: Partial<ClassRequest> = {}): ClassRequest {
  return { org: "a", project: "p", user: "u", gpuModel: H100, cards: 1, mayBorrow: false, ...over };
}

const tree: ShareTree = {
  orgs: [
    { org: "a", weight: 2, quotas: { [H100]: { guaranteed: 4, borrowingLimit: 4 } } },
    { org: "b", quotas: { [H100]: { guaranteed: 4, lendingLimit: 2 } } },
  ],
};
const fleet = { [H100]: 10 };

describe("a slice's size in card equivalents", () => {
  it("is the larger of its memory share and its cores share", () => {
    expect(cardEquivalents({ gpuCount: 1, slice: { memoryMib: 10_000, cores: 50 } }, { memoryMib: 80_000 })).toBe(0.5);
    expect(cardEquivalents({ gpuCount: 1, slice: { memoryMib: 40_000, cores: 10 } }, { memoryMib: 80_000 })).toBe(0.5);
  });

  it("is the count for whole cards", () => {
    expect(cardEquivalents({ gpuCount: 4 }, { memoryMib: 80_000 })).toBe(4);
  });
});

describe("checking a share tree", () => {
  it("accepts a well-formed tree", () => {
    expect(checkShareTree(tree)).toEqual([]);
  });

  it("names each bad field: weight ≤ 0, lending above the guarantee, a negative borrowing limit", () => {
    const issues = checkShareTree({
      orgs: [
        {
          org: "a",
          weight: 0,
          quotas: { [H100]: { guaranteed: 2, lendingLimit: 3, borrowingLimit: -1 } },
          projects: [{ project: "p", weight: -2, userWeights: { ann: 0 } }],
        },
      ],
    });
    expect(issues.map((i) => i.field)).toEqual([
      "orgs[0].weight",
      `orgs[0].quotas.${H100}.borrowingLimit`,
      `orgs[0].quotas.${H100}.lendingLimit`,
      "orgs[0].projects[0].weight",
      "orgs[0].projects[0].userWeights.ann",
    ]);
    expect(issues[2]?.message).toContain("above the guarantee 2");
  });

  it("refuses projects whose guarantees add up to more than their organization's", () => {
    const issues = checkShareTree({
      orgs: [
        {
          org: "a",
          quotas: { [H100]: { guaranteed: 4 } },
          projects: [
            { project: "x", quotas: { [H100]: { guaranteed: 3 } } },
            { project: "y", quotas: { [H100]: { guaranteed: 2 } } },
          ],
        },
      ],
    });
    expect(issues).toEqual([
      {
        field: "orgs[0].projects",
        message: `the projects' guarantees of ${H100} add up to 5, above the organization's 4`,
      },
    ]);
  });

  it("throws a typed validation error naming the first field", () => {
    const bad: ShareTree = { orgs: [{ org: "a", weight: Number.NaN }] };
    expect(() => assertShareTree(bad)).toThrow(FairShareInvalid);
    try {
      assertShareTree(bad);
    } catch (err) {
      expect((err as FairShareInvalid).code).toBe("validation_failed");
      expect((err as FairShareInvalid).field).toBe("orgs[0].weight");
    }
  });
});

describe("settings", () => {
  it("fill in the defaults", () => {
    expect(resolveSettings()).toMatchObject({ halfLifeMs: 7 * 24 * 3_600_000, agingCap: 1440, maxUsagePenalty: 1000 });
  });

  it("refuse a half-life ≤ 0 and a negative minimum runtime, naming the fields", () => {
    expect(() => resolveSettings({ halfLifeMs: 0, minRuntimeMs: -1 })).toThrow(
      expect.objectContaining({
        field: "halfLifeMs",
        issues: expect.arrayContaining([expect.objectContaining({ field: "minRuntimeMs" })]),
      }),
    );
  });

  it("refuse an aging cap that does not exceed the largest usage penalty (starvation)", () => {
    expect(() => resolveSettings({ agingCap: 1000 })).toThrow(expect.objectContaining({ field: "agingCap" }));
  });
});

describe("whether the guarantees fit the fleet", () => {
  const clusters: ClusterCapacity[] = [
    { clusterId: "c1", placeable: true, models: { [H100]: { total: 32, free: 0, largestNode: 8 } } },
    { clusterId: "c2", placeable: true, models: { [H100]: { total: 32, free: 32, largestNode: 8 } } },
    { clusterId: "c3", placeable: false, models: { [H100]: { total: 64, free: 64, largestNode: 8 } } },
  ];

  it("counts placeable clusters' allocatable GPUs", () => {
    expect(fleetCapacity(clusters)).toEqual({ [H100]: 64 });
  });

  it("gives the arithmetic when they do not", () => {
    const report = checkSatisfiable(
      {
        orgs: [
          { org: "a", quotas: { [H100]: { guaranteed: 32 }, [L4]: { guaranteed: 1 } } },
          { org: "b", quotas: { [H100]: { guaranteed: 40 } } },
        ],
      },
      fleetCapacity(clusters),
    );
    expect(report.ok).toBe(false);
    expect(report.message).toBe(
      `guarantees exceed the fleet: ${H100}: a 32 + b 40 = 72 guaranteed > 64 in the fleet; ${L4}: a 1 guaranteed > 0 in the fleet`,
    );
  });

  it("passes when they do", () => {
    expect(checkSatisfiable(tree, fleet)).toMatchObject({ ok: true, message: "" });
  });
});

describe("a request's capacity class", () => {
  it("is guaranteed within the organization's guarantee", () => {
    const holders = [aHolder("s1", { cards: 3 })];
    expect(classifyRequest(tree, holders, aRequest(), fleet).kind).toBe("guaranteed");
  });

  it("waits for the guarantee when the person did not opt in to borrowing", () => {
    const holders = [aHolder("s1", { cards: 4 })];
    expect(classifyRequest(tree, holders, aRequest(), fleet)).toMatchObject({
      kind: "refused",
      reason: "OverGuarantee",
    });
  });

  it("is borrowed beyond the guarantee when opted in and something is lendable", () => {
    const holders = [aHolder("s1", { cards: 4 })];
    expect(classifyRequest(tree, holders, aRequest({ mayBorrow: true }), fleet).kind).toBe("borrowed");
  });

  it("is refused over the borrowing limit", () => {
    const holders = [aHolder("s1", { cards: 4 }), aHolder("s2", { cards: 3, capacityClass: "borrowed" })];
    expect(classifyRequest(tree, holders, aRequest({ mayBorrow: true, cards: 2 }), fleet)).toMatchObject({
      kind: "refused",
      reason: "OverBorrowingLimit",
    });
  });

  it("borrows only what others lend: unguaranteed room plus unused guarantee within lending limits", () => {
    // 10 − 8 guaranteed = 2 unguaranteed; b lends at most 2 of its unused 4: 4 borrowable in all.
    const holders = [aHolder("s1", { cards: 4 }), aHolder("s2", { cards: 3, capacityClass: "borrowed" })];
    expect(classifyRequest(tree, holders, aRequest({ mayBorrow: true }), fleet).kind).toBe("borrowed");
    const more = [...holders, aHolder("s3", { org: "c", capacityClass: "borrowed" })];
    expect(classifyRequest(tree, more, aRequest({ mayBorrow: true }), fleet)).toMatchObject({
      kind: "refused",
      reason: "NothingLendable",
      message: `nothing of ${H100} to borrow: 2 unguaranteed + 2 lendable − 4 borrowed = 0`,
    });
  });

  it("counts a project's own guarantee, and the org's remainder for projects without one", () => {
    const t: ShareTree = {
      orgs: [
        {
          org: "a",
          quotas: { [H100]: { guaranteed: 4 } },
          projects: [{ project: "x", quotas: { [H100]: { guaranteed: 3 } } }],
        },
      ],
    };
    const holders = [aHolder("s1", { project: "x", cards: 3 })];
    expect(classifyRequest(t, holders, aRequest({ project: "x" }), fleet).kind).toBe("refused");
    expect(classifyRequest(t, holders, aRequest({ project: "y" }), fleet).kind).toBe("guaranteed");
    const more = [...holders, aHolder("s2", { project: "z" })];
    expect(classifyRequest(t, more, aRequest({ project: "y" }), fleet).kind).toBe("refused");
  });

  it("counts slices as their share of a card, without float crumbs refusing an exact fit", () => {
    const holders = Array.from({ length: 31 }, (_, i) => aHolder(`s${i}`, { cards: 0.125 }));
    const t: ShareTree = { orgs: [{ org: "a", quotas: { [H100]: { guaranteed: 4 } } }] };
    expect(classifyRequest(t, holders, aRequest({ cards: 0.125 }), fleet).kind).toBe("guaranteed");
  });

  it("is guaranteed for a model nobody has a quota for (unmanaged: first come, first served)", () => {
    expect(classifyRequest(tree, [], aRequest({ gpuModel: L4 }), fleet).kind).toBe("guaranteed");
  });
});
