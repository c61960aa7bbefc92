import type { Session, Volume } from "@berth/crds";
import { describe, expect, it } from "vitest";
import { idleClaims, purgeDue } from "./claims.ts";

const vol = (name: string, bound?: string, lastUsedAt?: string): [string, Volume] => [
  `org-a/${name}`,
  {
    metadata: { name, namespace: "org-a" },
    spec: { sizeGb: 1 },
    status: bound ? { boundCluster: bound, claimName: `berth-${name}`, ...(lastUsedAt ? { lastUsedAt } : {}) } : {},
  } as unknown as Volume,
];
const ses = (volume: string, phase: string, desiredState = "Running") =>
  ({
    metadata: { name: "ses-x", namespace: "org-a" },
    spec: { volumes: [{ volume, readOnly: false }], desiredState },
    status: { phase },
  }) as unknown as Session;

describe("idle claims", () => {
  const IDLE = 15 * 60_000;
  const t0 = Date.parse("2026-11-26T06:00:00Z");

  it("keeps a claim a running, queued or pausing session uses, and forgets it once idle past the time", () => {
    const last = new Map<string, number>();
    const vols = [vol("vol-a", "clu_a", "2026-11-26T05:00:00Z"), vol("vol-b", "clu_a"), vol("vol-c")];
    expect(idleClaims(vols, [ses("vol-a", "Running"), ses("vol-b", "Queued")], last, t0, IDLE)).toEqual([]);
    // Both sessions end: each volume is idle from when it was last seen in use, not from when its claim
    // was recorded (an hour before).
    expect(idleClaims(vols, [ses("vol-a", "Terminated"), ses("vol-b", "Paused")], last, t0 + 60_000, IDLE)).toEqual([]);
    expect(idleClaims(vols, [], last, t0 + IDLE - 1, IDLE)).toEqual([]);
    expect(idleClaims(vols, [], last, t0 + IDLE, IDLE).sort()).toEqual(["org-a/vol-a", "org-a/vol-b"]);
  });

  it("after a restart (no memory), counts from the time the claim was recorded", () => {
    const last = new Map<string, number>();
    expect(idleClaims([vol("vol-a", "clu_a", "2026-11-26T05:00:00Z")], [], last, t0, IDLE)).toEqual(["org-a/vol-a"]);
    expect(idleClaims([vol("vol-b", "clu_a")], [], last, t0, IDLE)).toEqual([]);
  });

  it("a session asked to terminate no longer holds its volume", () => {
    const last = new Map<string, number>();
    const vols = [vol("vol-a", "clu_a", "2026-11-26T05:00:00Z")];
    expect(idleClaims(vols, [ses("vol-a", "Running", "Terminated")], last, t0, IDLE)).toEqual(["org-a/vol-a"]);
  });
});

describe("deleted volumes", () => {
  const t0 = Date.parse("2026-11-26T06:00:00Z");
  const deleted = (name: string, purgeAfter: string, bound?: string): [string, Volume] => {
    const [key, v] = vol(name, bound);
    return [key, { ...v, metadata: { ...v.metadata, annotations: { "berth.dev/purge-after": purgeAfter } } } as Volume];
  };

  it("releases a deleted volume's claim at once, without waiting for it to be idle", () => {
    const last = new Map<string, number>();
    const v = deleted("vol-d", "2026-11-27T06:00:00Z", "clu_a");
    expect(idleClaims([v], [], last, t0, 15 * 60_000)).toEqual(["org-a/vol-d"]);
  });

  it("purges only after the grace period, and only once its claim is gone", () => {
    expect(purgeDue([deleted("vol-d", "2026-11-26T07:00:00Z")], t0)).toEqual([]);
    expect(purgeDue([deleted("vol-d", "2026-11-26T06:00:00Z", "clu_a")], t0)).toEqual([]);
    expect(purgeDue([deleted("vol-d", "2026-11-26T06:00:00Z"), vol("vol-live")], t0)).toEqual(["org-a/vol-d"]);
  });
});

describe("the release time each idle volume shows", () => {
  const IDLE = 15 * 60_000;
  const t0 = Date.parse("2026-11-26T06:00:00Z");

  it("records when an idle claim goes, clears it once a session uses it again, and keeps a recorded time across leaders", () => {
    const last = new Map<string, number>();
    const vols = [vol("vol-a", "clu_a")];
    const marks = new Map<string, string | null>();
    expect(idleClaims(vols, [], last, t0, IDLE, marks)).toEqual([]);
    expect(marks.get("org-a/vol-a")).toBe(new Date(t0 + IDLE).toISOString());
    // A new leader, with no memory, goes by the recorded time: released then, not 15 minutes after it started.
    const recorded = vol("vol-a", "clu_a");
    (recorded[1].status as Record<string, unknown>).releaseAfter = new Date(t0 + IDLE).toISOString();
    const fresh = new Map<string, string | null>();
    expect(idleClaims([recorded], [], new Map(), t0 + 10 * 60_000, IDLE, fresh)).toEqual([]);
    expect(fresh.size).toBe(0);
    expect(idleClaims([recorded], [], new Map(), t0 + IDLE, IDLE)).toEqual(["org-a/vol-a"]);
    const used = new Map<string, string | null>();
    idleClaims([recorded], [ses("vol-a", "Running")], new Map(), t0 + 60_000, IDLE, used);
    expect(used.get("org-a/vol-a")).toBeNull();
  });

  it("finishes a release that began, whatever uses the volume now", () => {
    const marked = vol("vol-a", "clu_a");
    (marked[1].status as Record<string, unknown>).releasingSince = new Date(t0).toISOString();
    expect(idleClaims([marked], [ses("vol-a", "Running")], new Map(), t0, IDLE)).toEqual(["org-a/vol-a"]);
  });
});
