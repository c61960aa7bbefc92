// The queue ETA's pure parts: the other shapes it tries for a waiting session (alternativesFor) and the
// core's input from the rows (etaInputOf). No database.
import { estimateQueue, type PlacementRequest } from "@berth/controllers";
import { type Offering, OfferingKind, ResourcePolicyKind } from "@berth/crds";
import { describe, expect, it } from "vitest";
import type { SessionRow } from "../../db/operations/sessions/types.ts";
import { ARRIVAL_WINDOW_MS, alternativesFor, etaInputOf } from "./queueEta.ts";

const H100 = "NVIDIA-H100-80GB-HBM3";
const L4 = "NVIDIA-L4";
const offering = (name: string, gpuModel: string, slicesPerCard?: number): Offering =>
  OfferingKind.build({ name }, {
    displayName: name,
    gpuModel,
    gpuCount: 1,
    gpuMemoryMib: 81_920,
    tier: "standard",
    hourlyCreditRate: "1000",
    ...(slicesPerCard ? { slicesPerCard } : {}),
  } as Offering["spec"]) as Offering;
const row = {
  id: "ses_1",
  offering: "h100",
  gpu_model: H100,
  gpu_count: 1,
  gpu_slices_per_card: null,
  organization_id: "org_a",
  project_id: null,
  owner_id: "usr_a",
  cluster_pin: "gpu-a",
} as unknown as SessionRow;
const request: PlacementRequest = {
  key: "ses_1",
  gpuModel: H100,
  gpuCount: 1,
  priority: 0,
  since: "2026-11-29T00:00:00.000Z",
  volumes: [],
  clusterPin: "gpu-a",
};
const offerings = [
  offering("h100", H100),
  offering("h100-half", H100, 2),
  offering("h100-quarter", H100, 4),
  offering("l4", L4),
  offering("a100", "NVIDIA-A100"),
];

describe("other shapes for the queue ETA's hint", () => {
  it("tries the session unpinned, smaller slices of its model and other models the fleet has, smallest first", () => {
    const alts = alternativesFor(row, request, offerings, [], new Set([H100, L4]));
    expect(alts.map((a) => a.label)).toEqual([
      "the same session on any cluster",
      "a 1/4 slice of NVIDIA-H100-80GB-HBM3 (offering h100-quarter)",
      "a 1/2 slice of NVIDIA-H100-80GB-HBM3 (offering h100-half)",
      "1 × NVIDIA-L4 (offering l4)",
    ]);
    expect(alts[0]?.request.clusterPin).toBeUndefined();
    expect(alts[2]?.request).toMatchObject({ gpuModel: H100, gpuCount: 1, slice: { memoryMib: 40_960, cores: 50 } });
    expect(alts[3]?.request).toMatchObject({ gpuModel: L4, gpuCount: 1, clusterPin: "gpu-a" });
  });

  it("leaves out offerings its scope may not use, and slices no smaller than what it asks", () => {
    const policy = ResourcePolicyKind.build(
      { name: "org-a" },
      { scope: { kind: "organization", id: "org_a" }, allowedOfferings: ["h100", "h100-half"] },
    );
    const half = { ...row, offering: "h100-half", gpu_slices_per_card: 2, cluster_pin: null } as SessionRow;
    const { clusterPin: _, ...unpinned } = request;
    expect(alternativesFor(half, unpinned, offerings, [policy as never], new Set([H100, L4]))).toEqual([]);
  });
});

describe("the ETA's input from the rows, as the worker's placement pass sees them", () => {
  const NOW = new Date("2026-11-29T12:00:00Z");
  const ago = (min: number) => new Date(NOW.getTime() - min * 60_000);
  const session = (id: string, over: Partial<SessionRow> = {}) =>
    ({
      ...row,
      id,
      cluster_pin: null,
      gpu_share_num: null,
      gpu_share_den: null,
      priority: 0,
      capacity_class: "guaranteed",
      phase: "Queued",
      created_at: ago(30),
      queued_at: ago(30),
      started_at: null,
      updated_at: ago(1),
      paused_at: null,
      terminated_at: null,
      cluster_id: null,
      ...over,
    }) as unknown as SessionRow;
  const base = { now: NOW, holdingRows: [], finished: [], reclaims: [], maxRuntimeMs: () => 8 * 60 * 60_000 };
  const order = (i: ReturnType<typeof etaInputOf>) => [...i.waiting].sort(i.compare).map((w) => w.key);

  it("queues a session paused by a reclaim from its first start, ahead of newer work", () => {
    const input = etaInputOf({
      ...base,
      waitingRows: [
        session("ses_new", { queued_at: ago(20) }),
        session("ses_back", { phase: "Paused", queued_at: ago(2), started_at: ago(90), paused_at: ago(3) }),
      ],
      reclaims: [{ session_id: "ses_back", pause_at: ago(3), paused_at: ago(3) }],
    });
    expect(input.waiting.find((w) => w.key === "ses_back")?.since).toBe(ago(90).toISOString());
    expect(order(input)).toEqual(["ses_back", "ses_new"]);
  });

  it("ends a session under a reclaim notice by its pause, and counts runs still going as recent starts", () => {
    const holding = session("ses_lent", { phase: "Running", cluster_id: "gpu-a", started_at: ago(60) });
    const input = etaInputOf({
      ...base,
      waitingRows: [session("ses_w")],
      holdingRows: [holding, session("ses_other", { phase: "Running", cluster_id: "gpu-a", started_at: ago(5) })],
      reclaims: [{ session_id: "ses_lent", pause_at: new Date(NOW.getTime() + 10 * 60_000), paused_at: null }],
    });
    expect(input.running.map((r) => [r.key, r.maxRuntimeMs])).toEqual([
      ["ses_lent", 70 * 60_000],
      ["ses_other", 8 * 60 * 60_000],
    ]);
    expect(input.recentStarts).toEqual([ago(60).toISOString(), ago(5).toISOString()]);
  });

  it("orders by fair share when it is on: the lighter organization's newer request first, borrowed last", () => {
    const waitingRows = [
      session("ses_heavy", { organization_id: "org_heavy", owner_id: "usr_h", queued_at: ago(30) }),
      session("ses_light", { organization_id: "org_light", owner_id: "usr_l", queued_at: ago(10) }),
      session("ses_borrow", {
        organization_id: "org_light",
        owner_id: "usr_l",
        queued_at: ago(40),
        capacity_class: "borrowed",
      }),
    ];
    expect(order(etaInputOf({ ...base, waitingRows }))).toEqual(["ses_heavy", "ses_light", "ses_borrow"]);
    const fair = {
      tree: { orgs: [{ org: "org_heavy" }, { org: "org_light" }] },
      settings: {},
      usage: { orgs: { org_heavy: 500 }, projects: {}, users: { usr_h: 500 } },
    };
    expect(order(etaInputOf({ ...base, waitingRows, fair }))).toEqual(["ses_light", "ses_heavy", "ses_borrow"]);
  });

  it("gives the ETA fair share's admission: a borrowed session at its organization's borrowing limit waits, GPUs free or not", () => {
    const holding = session("ses_lent", {
      phase: "Running",
      cluster_id: "gpu-a",
      started_at: ago(30),
      capacity_class: "borrowed",
    });
    const waitingRows = [session("ses_borrow", { capacity_class: "borrowed" })];
    const fair = {
      tree: { orgs: [{ org: "org_a", quotas: { [H100]: { guaranteed: 1, borrowingLimit: 1 } } }] },
      settings: {},
      usage: { orgs: {}, projects: {}, users: {} },
    };
    const rows = etaInputOf({
      ...base,
      waitingRows,
      holdingRows: [holding],
      finished: Array.from({ length: 20 }, (_, i) =>
        session(`ses_done${i}`, { phase: "Terminated", started_at: ago(200 + i), terminated_at: ago(140 + i) }),
      ),
      fair,
    });
    expect(rows.fairShare?.sessions).toEqual({
      ses_borrow: { org: "org_a", project: "", user: "usr_a", cards: 1, capacityClass: "borrowed" },
      ses_lent: { org: "org_a", project: "", user: "usr_a", cards: 1, capacityClass: "borrowed" },
    });
    const [eta] = estimateQueue({
      ...rows,
      now: NOW.toISOString(),
      clusters: [{ clusterId: "gpu-a", placeable: true, models: { [H100]: { total: 4, free: 3, largestNode: 4 } } }],
      policy: "binpack",
    });
    // Three GPUs free, yet org_a borrows its limit until ses_lent ends (its runs last an hour: in 30 min).
    expect(eta).toMatchObject({ key: "ses_borrow", reason: "OverBorrowingLimit", method: "simulation" });
    expect(eta?.p50Ms).toBeGreaterThan(0);
    expect(etaInputOf({ ...base, waitingRows, holdingRows: [holding] }).fairShare).toBeUndefined();
  });

  it("expects, with fair share, each owner's recent arrivals to go on, scored as a request of theirs made now", () => {
    const fair = {
      tree: { orgs: [{ org: "org_heavy" }, { org: "org_light" }] },
      settings: {},
      usage: { orgs: { org_heavy: 500 }, projects: {}, users: { usr_h: 500 } },
    };
    const waitingRows = [session("ses_heavy", { organization_id: "org_heavy", owner_id: "usr_h" })];
    const arrivals = [
      session("ses_l1", { organization_id: "org_light", owner_id: "usr_l", gpu_count: 2 }),
      session("ses_l2", { organization_id: "org_light", owner_id: "usr_l" }),
      session("ses_h1", { organization_id: "org_heavy", owner_id: "usr_h" }),
    ];
    const input = etaInputOf({ ...base, waitingRows, fair, arrivals });
    const [light, heavy] = input.arrivals?.streams ?? [];
    expect(light?.ratePerMs).toBeCloseTo(2 / ARRIVAL_WINDOW_MS, 15);
    expect(light?.shapes.map((x) => x.gpuCount)).toEqual([2, 1]);
    expect(heavy?.ratePerMs).toBeCloseTo(1 / ARRIVAL_WINDOW_MS, 15);
    // A light owner's new request outranks the heavy one's waiting for 30 min; a heavy one's does not.
    expect(light?.score).toBeGreaterThan(input.arrivals?.scores.ses_heavy as number);
    expect(heavy?.score).toBeLessThan(input.arrivals?.scores.ses_heavy as number);
    expect(etaInputOf({ ...base, waitingRows, arrivals }).arrivals).toBeUndefined();
  });
});
