import { describe, expect, it } from "vitest";
import { UnseenCreates } from "./unseen.ts";

/** `clock.watched`: where the informer's watch is (Informer.passed compares the same way). */
function records(ttlMs = 5_000) {
  const clock = { t: 1_000, watched: 0 };
  const unseen = new UnseenCreates({ ttlMs, now: () => clock.t, passed: (rv) => Number(rv) <= clock.watched });
  return { unseen, clock };
}

describe("creates not yet seen by the informer", () => {
  it("holds a create for its lifetime, then lets the store alone decide again", () => {
    const { unseen, clock } = records();
    unseen.created("ns/ses-a", "uid-1");
    expect(unseen.pending("ns/ses-a")).toBe(5_000);
    clock.t += 4_000;
    expect(unseen.pending("ns/ses-a")).toBe(1_000);
    clock.t += 1_000;
    expect(unseen.pending("ns/ses-a")).toBeUndefined();
    expect(unseen.size).toBe(0);
  });

  // A delete is reported the same way (the object's last state, uid included): the race of a delete with
  // the create is covered end to end in controller.test.ts.
  it("goes as soon as the watch shows the object created", () => {
    const { unseen } = records();
    unseen.created("ns/ses-a", "uid-1");
    unseen.seen("ns/ses-a", "uid-1");
    expect(unseen.pending("ns/ses-a")).toBeUndefined();
  });

  it("stays when the watch shows another object of that name (the old pod of a restart)", () => {
    const { unseen } = records();
    unseen.created("ns/ses-a", "uid-new");
    unseen.seen("ns/ses-a", "uid-old");
    expect(unseen.pending("ns/ses-a")).toBe(5_000);
  });

  it("goes on any object of that name after a 409, whose uid is not known", () => {
    const { unseen } = records();
    unseen.created("ns/ses-a");
    unseen.seen("ns/ses-a", "whatever");
    expect(unseen.pending("ns/ses-a")).toBeUndefined();
  });

  it("goes when the watch has gone past it without showing it (deleted before the informer looked)", () => {
    const { unseen, clock } = records();
    unseen.created("ns/ses-a", "uid-1", "500");
    clock.watched = 499;
    expect(unseen.pending("ns/ses-a")).toBe(5_000);
    clock.watched = 501;
    expect(unseen.pending("ns/ses-a")).toBeUndefined();
  });

  it("waits for a lagging watch as long as its lifetime, however long the lag", () => {
    const { unseen, clock } = records(30_000);
    unseen.created("ns/ses-a", "uid-1", "500");
    clock.t += 20_000;
    clock.watched = 420;
    expect(unseen.pending("ns/ses-a")).toBe(10_000);
  });

  it("forgets records never asked about again", () => {
    const { unseen, clock } = records();
    unseen.created("ns/ses-a", "uid-1");
    clock.t += 6_000;
    unseen.created("ns/ses-b", "uid-2");
    expect(unseen.size).toBe(1);
  });
});
