// The event recorder: Events on the Session as `kubectl describe` shows them, posted in the background,
// best effort, and idle() only once every Event handed over is posted.
import pino from "pino";
import { describe, expect, it } from "vitest";
import { EventRecorder } from "./event-recorder.ts";
import { MemoryKube } from "./memory-kube.test-support.ts";
import { aSession } from "./session-builder.test-support.ts";

const AT = new Date("2026-11-22T06:00:07.250Z");

function aRecorder() {
  const kube = new MemoryKube();
  const counts = { events: 0 };
  const recorder = new EventRecorder({
    kube,
    log: pino({ level: "silent" }),
    now: () => AT,
    component: "berth-worker",
    counts,
  });
  return { kube, counts, recorder };
}

describe("the event recorder", () => {
  it("posts each Event on its Session, at the injected clock's time, once idle() resolves", async () => {
    const { kube, counts, recorder } = aRecorder();
    const s = aSession("ses-abc").build();
    recorder.record(s, [
      { type: "Normal", reason: "Scheduled", message: "placed on clu_a1" },
      { type: "Warning", reason: "MirrorLost", message: "x".repeat(2000) },
    ]);
    await recorder.idle();
    const events = kube.list("events");
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({
      metadata: { namespace: "org-acme" },
      involvedObject: { kind: "Session", name: "ses-abc", namespace: "org-acme", uid: "uid-ses-abc" },
      type: "Normal",
      reason: "Scheduled",
      source: { component: "berth-worker" },
      firstTimestamp: "2026-11-22T06:00:07Z",
    });
    expect((events[1] as unknown as { message: string }).message).toHaveLength(1024);
    expect(counts.events).toBe(2);
    expect(recorder.busy).toBe(false);
  });

  it("drops an Event the apiserver refuses and posts the ones after it", async () => {
    const { kube, recorder } = aRecorder();
    let refuse = 1;
    kube.fail = (method) => (method === "POST" && refuse-- > 0 ? 500 : undefined);
    const s = aSession().build();
    recorder.record(s, [{ type: "Normal", reason: "First", message: "refused" }]);
    recorder.record(s, [{ type: "Normal", reason: "Second", message: "posted" }]);
    await recorder.idle();
    expect(kube.list("events").map((e) => (e as unknown as { reason: string }).reason)).toEqual(["Second"]);
  });

  it("is idle at once when it was handed nothing", async () => {
    const { recorder } = aRecorder();
    recorder.record(aSession().build(), []);
    expect(recorder.busy).toBe(false);
    await recorder.idle();
  });
});
