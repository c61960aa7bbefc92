import { describe, expect, it } from "vitest";
import { decide, microTime, nextSpec, observe, releasedSpec } from "./lease-decide.ts";

const DURATION = 15_000;
const held = (holder: string, renewTime = "2026-11-22T06:00:00.000000Z") => ({
  holderIdentity: holder,
  leaseDurationSeconds: 15,
  acquireTime: "2026-11-22T05:00:00.000000Z",
  renewTime,
  leaseTransitions: 2,
});

describe("decide", () => {
  it("the holder renews its own lease, even one that looks expired", () => {
    const spec = held("me");
    expect(decide(spec, observe(undefined, spec, 0), "me", 1_000_000, DURATION)).toEqual({ action: "renew" });
  });

  it("an empty holder (a released or new lease) is acquired at once", () => {
    const spec = { holderIdentity: null };
    expect(decide(spec, observe(undefined, spec, 0), "me", 0, DURATION)).toEqual({
      action: "acquire",
      takeover: false,
    });
  });

  it("another holder's lease is waited on for a full duration after this replica first saw it", () => {
    const spec = held("other");
    const obs = observe(undefined, spec, 100_000);
    expect(decide(spec, obs, "me", 100_000, DURATION)).toEqual({
      action: "wait",
      holder: "other",
      expiresInMs: 15_000,
    });
    expect(decide(spec, obs, "me", 114_999, DURATION)).toMatchObject({ action: "wait", expiresInMs: 1 });
    expect(decide(spec, obs, "me", 115_000, DURATION)).toEqual({ action: "acquire", takeover: true });
  });

  it("a renewal seen by the follower restarts its wait, whatever the renew time says", () => {
    let obs = observe(undefined, held("other", "2026-11-22T06:00:00.000000Z"), 0);
    obs = observe(obs, held("other", "2026-11-22T06:00:02.000000Z"), 10_000);
    expect(decide(held("other", "2026-11-22T06:00:02.000000Z"), obs, "me", 20_000, DURATION)).toMatchObject({
      action: "wait",
      expiresInMs: 5_000,
    });
  });

  it("an unchanged record keeps the first observation time", () => {
    const spec = held("other");
    const first = observe(undefined, spec, 5);
    expect(observe(first, { ...spec }, 50)).toBe(first);
  });
});

describe("nextSpec", () => {
  it("renewing keeps the acquire time and the transitions", () => {
    const s = nextSpec(held("me"), "me", Date.UTC(2026, 10, 22, 6, 0, 5), DURATION);
    expect(s).toEqual({ ...held("me"), renewTime: "2026-11-22T06:00:05.000000Z" });
  });

  it("taking over counts a transition and stamps a new acquire time", () => {
    const s = nextSpec(held("other"), "me", Date.UTC(2026, 10, 22, 6, 0, 5, 123), DURATION);
    expect(s).toMatchObject({ holderIdentity: "me", leaseTransitions: 3, acquireTime: "2026-11-22T06:00:05.123000Z" });
  });

  it("a released lease is taken without a transition; durations round up to whole seconds", () => {
    const s = nextSpec(releasedSpec(held("other"), 0), "me", 0, 1_500);
    expect(s).toMatchObject({ holderIdentity: "me", leaseTransitions: 2, leaseDurationSeconds: 2 });
  });
});

describe("microTime", () => {
  it("writes six fractional digits", () => {
    expect(microTime(Date.UTC(2026, 0, 2, 3, 4, 5, 6))).toBe("2026-01-02T03:04:05.006000Z");
  });
});
