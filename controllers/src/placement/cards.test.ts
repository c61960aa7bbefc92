import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type CardView, computeCapacity, type InventoryNodeView } from "./capacity.ts";
import { type CardHolding, CardPool } from "./cards.ts";
import { planPlacement } from "./plan.ts";
import type { PlacementPolicy, PlacementRequest } from "./types.ts";

const H100 = "NVIDIA-H100-80GB-HBM3";
const CARD_MIB = 81559;
const slice = (n: number) => ({ memoryMib: Math.floor(CARD_MIB / n), cores: Math.floor(100 / n) });

function aCard(
  uuid: string,
  used: Partial<Pick<CardView, "memoryUsedMib" | "coresUsed" | "vgpusUsed">> = {},
): CardView {
  return {
    uuid,
    memoryMib: CARD_MIB,
    cores: 100,
    split: 10,
    healthy: true,
    memoryUsedMib: 0,
    coresUsed: 0,
    vgpusUsed: 0,
    ...used,
  };
}

function aHamiNode(clusterId: string, name: string, cards: CardView[], over: Partial<InventoryNodeView> = {}) {
  return {
    clusterId,
    name,
    gpuModel: H100,
    gpuAllocatable: cards.length,
    gpuInUse: cards.filter((c) => c.vgpusUsed > 0).length,
    schedulable: true,
    ready: true,
    sharing: "hami" as const,
    cards,
    ...over,
  } satisfies InventoryNodeView;
}

let t = 0;
function aRequest(name: string, over: Partial<PlacementRequest> = {}): PlacementRequest {
  t += 1;
  return {
    key: `org/${name}`,
    gpuModel: H100,
    gpuCount: 1,
    priority: 0,
    since: new Date(Date.UTC(2026, 10, 26, 8, 0, 0, t)).toISOString(),
    volumes: [],
    ...over,
  };
}

function plan(
  nodes: InventoryNodeView[],
  requests: PlacementRequest[],
  policy: PlacementPolicy = "binpack",
  holdings: CardHolding[] = [],
) {
  const clusters = [...new Set(nodes.map((n) => n.clusterId))].map((clusterId) => ({ clusterId, placeable: true }));
  return planPlacement({
    requests,
    clusters: computeCapacity(clusters, nodes, []),
    policy,
    cards: new CardPool(nodes, holdings),
  });
}

const cardOf = (p: ReturnType<typeof plan>, name: string) =>
  p.placed.find((x) => x.key === `org/${name}`)?.assignment?.cards.join(",");

describe("slices on cards", () => {
  it("packs eight 1/8 slices onto one H100 and puts the ninth on the next card (bin-pack)", () => {
    const nodes = [aHamiNode("clu_a", "n1", [aCard("c0"), aCard("c1")])];
    const reqs = Array.from({ length: 9 }, (_, i) => aRequest(`s${i}`, { slice: slice(8) }));
    const p = plan(nodes, reqs);
    expect(p.placed.map((x) => x.assignment?.cards[0])).toEqual([...Array(8).fill("c0"), "c1"]);
    expect(p.placed.every((x) => x.assignment?.node === "n1")).toBe(true);
  });

  it("packs 1/32 slices as the card's split allows: 32 on a card split 32, 10 on HAMi's default split", () => {
    const nodes = [aHamiNode("clu_a", "n1", [{ ...aCard("c0"), split: 32 }, aCard("c1")])];
    const reqs = Array.from({ length: 43 }, (_, i) => aRequest(`s${i}`, { slice: slice(32) }));
    const p = plan(nodes, reqs);
    const on = (card: string) => p.placed.filter((x) => x.assignment?.cards[0] === card).length;
    expect([on("c0"), on("c1")]).toEqual([32, 10]);
    expect(p.placed).toHaveLength(42);
  });

  it("spreads slices over cards under spread", () => {
    const nodes = [aHamiNode("clu_a", "n1", [aCard("c0"), aCard("c1")])];
    const p = plan(nodes, [aRequest("a", { slice: slice(8) }), aRequest("b", { slice: slice(8) })], "spread");
    expect([cardOf(p, "a"), cardOf(p, "b")]).toEqual(["c0", "c1"]);
  });

  it("never puts a half-card slice on a card with a quarter free", () => {
    const threeQuarters = { memoryUsedMib: 3 * slice(4).memoryMib, coresUsed: 75, vgpusUsed: 3 };
    const nodes = [aHamiNode("clu_a", "n1", [aCard("full-ish", threeQuarters), aCard("empty")])];
    const p = plan(nodes, [aRequest("half", { slice: slice(2) }), aRequest("quarter", { slice: slice(4) })]);
    expect(cardOf(p, "half")).toBe("empty");
    // The quarter still fills the card that had a quarter left (bin-pack).
    expect(cardOf(p, "quarter")).toBe("full-ish");
  });

  it("waits when no single card has room, even if the node's sum would", () => {
    const half = { memoryUsedMib: slice(2).memoryMib + 2, coresUsed: 50, vgpusUsed: 1 };
    const nodes = [aHamiNode("clu_a", "n1", [aCard("c0", half), aCard("c1", half)])];
    const p = plan(nodes, [aRequest("h", { slice: slice(2) })]);
    expect(p.placed).toEqual([]);
    expect(p.waiting[0]?.reason).toBe("NoCapacity");
  });

  it("gives a whole-card session only cards nothing holds, all on one node", () => {
    const nodes = [
      aHamiNode("clu_a", "n1", [aCard("a0", { memoryUsedMib: 1024, coresUsed: 12, vgpusUsed: 1 }), aCard("a1")]),
      aHamiNode("clu_a", "n2", [aCard("b0"), aCard("b1")]),
    ];
    const p = plan(nodes, [aRequest("two", { gpuCount: 2 }), aRequest("one")]);
    expect(p.placed.find((x) => x.key === "org/two")?.assignment).toEqual({ node: "n2", cards: ["b0", "b1"] });
    expect(p.placed.find((x) => x.key === "org/one")?.assignment).toEqual({ node: "n1", cards: ["a1"] });
  });

  it("counts Berth's own holdings the inventory has not shown yet", () => {
    const nodes = [aHamiNode("clu_a", "n1", [aCard("c0")])];
    const held: CardHolding[] = Array.from({ length: 7 }, () => ({
      clusterId: "clu_a",
      node: "n1",
      cards: ["c0"],
      slice: slice(8),
    }));
    const p = plan(nodes, [aRequest("a", { slice: slice(8) }), aRequest("b", { slice: slice(8) })], "binpack", held);
    expect(p.placed.map((x) => x.key)).toEqual(["org/a"]);
    expect(p.waiting.map((x) => x.key)).toEqual(["org/b"]);
  });

  it("skips cordoned, not-ready nodes and unhealthy cards", () => {
    const nodes = [
      aHamiNode("clu_a", "n1", [aCard("c0")], { schedulable: false }),
      aHamiNode("clu_a", "n2", [aCard("c1")], { ready: false }),
      aHamiNode("clu_a", "n3", [{ ...aCard("c2"), healthy: false }, aCard("c3")]),
    ];
    const p = plan(nodes, [aRequest("a", { slice: slice(4) })]);
    expect(cardOf(p, "a")).toBe("c3");
  });

  it("sends a slice only to clusters with a sharing layer", () => {
    const plain: InventoryNodeView = {
      clusterId: "clu_plain",
      name: "p1",
      gpuModel: H100,
      gpuAllocatable: 8,
      gpuInUse: 0,
      schedulable: true,
      ready: true,
    };
    const p = plan([plain], [aRequest("a", { slice: slice(8) }), aRequest("w")]);
    expect(p.placed.map((x) => [x.key, x.clusterId, x.assignment])).toEqual([["org/w", "clu_plain", undefined]]);
    expect(p.waiting[0]?.reason).toBe("NoSharingLayer");
  });

  it("counts slices free per fraction card by card", () => {
    const nodes = [
      aHamiNode("clu_a", "n1", [aCard("c0", { memoryUsedMib: slice(8).memoryMib, coresUsed: 12, vgpusUsed: 1 })]),
    ];
    const pool = new CardPool(nodes, []);
    expect(pool.slicesFree("clu_a", H100, slice(8))).toBe(7);
    expect(pool.slicesFree("clu_a", H100, slice(4))).toBe(3);
    expect(pool.slicesFree("clu_a", H100, slice(2))).toBe(1);
    expect(pool.wholeFree("clu_a", H100)).toBe(0);
  });
});

// Mixed tiers after churn: random create / pause / resume / terminate sequences against the inventory,
// the inventory lagging two steps behind, never overcommit a card.
describe("mixed tiers after churn (property)", () => {
  type Tier = 1 | 2 | 4 | 8 | 16 | 32;
  const op: fc.Arbitrary<
    { kind: "create"; tier: Tier; whole: number } | { kind: "pause" | "resume" | "terminate"; pick: number }
  > = fc.oneof(
    fc.record({
      kind: fc.constant("create" as const),
      tier: fc.constantFrom<Tier>(1, 2, 4, 8, 16, 32),
      whole: fc.integer({ min: 1, max: 3 }),
    }),
    fc.record({ kind: fc.constantFrom("pause" as const, "resume" as const, "terminate" as const), pick: fc.nat() }),
  );

  it("never overcommits a card's memory, cores or vGPUs, and keeps whole cards exclusive", () => {
    fc.assert(
      fc.property(
        fc.array(op, { minLength: 1, maxLength: 80 }),
        fc.constantFrom<PlacementPolicy>("binpack", "spread"),
        (ops, policy) => {
          // n3's cards are split 32 (1/32 slices fill them); the others keep HAMi's default 10 vGPUs.
          const cards = (node: string) =>
            Array.from({ length: 4 }, (_, i) => ({ ...aCard(`${node}-${i}`), split: node === "n3" ? 32 : 10 }));
          const layout = ["n1", "n2", "n3"].map((n) => ({ n, cards: cards(n) }));
          interface S {
            key: string;
            tier: Tier;
            gpuCount: number;
            state: "waiting" | "held" | "paused" | "gone";
            at?: { node: string; cards: string[] };
          }
          const sessions: S[] = [];
          // The inventory lags: it shows the holdings of two steps ago (missing the newest placements, and
          // still showing sessions ended since).
          const seen: CardHolding[][] = [[], []];
          const holdings = (): CardHolding[] =>
            sessions.flatMap((s) =>
              s.state === "held" && s.at
                ? [
                    {
                      clusterId: "clu_a",
                      node: s.at.node,
                      cards: s.at.cards,
                      ...(s.tier > 1 ? { slice: slice(s.tier) } : {}),
                    },
                  ]
                : [],
            );
          // The inventory as the operator would report it for some earlier set of holdings.
          const inventory = (hs: CardHolding[]) =>
            layout.map(({ n, cards: cs }) =>
              aHamiNode(
                "clu_a",
                n,
                cs.map((c) => {
                  const on = hs.filter((h) => h.node === n && h.cards.includes(c.uuid));
                  return {
                    ...c,
                    memoryUsedMib: on.reduce((m, h) => m + (h.slice ? h.slice.memoryMib : c.memoryMib), 0),
                    coresUsed: on.reduce((m, h) => m + (h.slice ? h.slice.cores : 100), 0),
                    vgpusUsed: on.length,
                  };
                }),
              ),
            );
          for (const o of ops) {
            if (o.kind === "create")
              sessions.push({
                key: `org/s${sessions.length}`,
                tier: o.tier,
                gpuCount: o.tier > 1 ? 1 : o.whole,
                state: "waiting",
              });
            else {
              const live = sessions.filter((s) => s.state !== "gone");
              const s = live[o.pick % Math.max(1, live.length)];
              if (s) {
                if (o.kind === "terminate") s.state = "gone";
                else if (o.kind === "pause" && s.state === "held") s.state = "paused";
                else if (o.kind === "resume" && s.state === "paused") s.state = "waiting";
                if (s.state !== "held") delete s.at;
              }
            }
            const requests = sessions
              .filter((s) => s.state === "waiting")
              .map((s) =>
                aRequest(s.key.slice(4), {
                  key: s.key,
                  gpuCount: s.gpuCount,
                  ...(s.tier > 1 ? { slice: slice(s.tier) } : {}),
                }),
              );
            const nodes = inventory(seen[0] as CardHolding[]);
            const p = planPlacement({
              requests,
              clusters: computeCapacity([{ clusterId: "clu_a", placeable: true }], nodes, []),
              policy,
              cards: new CardPool(nodes, holdings()),
            });
            for (const placed of p.placed) {
              const s = sessions.find((x) => x.key === placed.key) as S;
              expect(placed.assignment).toBeDefined();
              s.state = "held";
              s.at = placed.assignment as { node: string; cards: string[] };
            }
            const lagging = holdings();
            seen.shift();
            seen.push(lagging);
            // The invariant, from what is held now.
            for (const { n, cards: cs } of layout)
              for (const c of cs) {
                const on = lagging.filter((h) => h.node === n && h.cards.includes(c.uuid));
                const whole = on.filter((h) => !h.slice);
                expect(whole.length === 0 || on.length === 1).toBe(true);
                expect(on.reduce((m, h) => m + (h.slice?.memoryMib ?? c.memoryMib), 0)).toBeLessThanOrEqual(
                  c.memoryMib,
                );
                expect(on.reduce((m, h) => m + (h.slice?.cores ?? 100), 0)).toBeLessThanOrEqual(c.cores);
                expect(on.length).toBeLessThanOrEqual(c.split);
              }
            // A whole-card session's cards are on one node.
            for (const s of sessions)
              if (s.state === "held" && s.tier === 1) expect(s.at?.cards).toHaveLength(s.gpuCount);
          }
        },
      ),
      { numRuns: 300, seed: 20261126 },
    );
  });
});
