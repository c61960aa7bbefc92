// @vitest-environment happy-dom
// A burst of stream events reaches a page once, with every event of the burst: a page that filters by
// type must not miss an event because another came after it.
import { afterEach, describe, expect, it, vi } from "vitest";
import type { LiveChange } from "../api/live-feed.ts";
import { feed } from "./context.ts";
import { MAX_BURST, onSessionsChanged } from "./live.ts";

const change = (event: string, data: unknown): LiveChange => ({
  source: "stream",
  message: { event, data: JSON.stringify(data) } as LiveChange["message"],
  data,
});
const emit = (c: LiveChange) => feed.dispatchEvent(new CustomEvent<LiveChange>("change", { detail: c }));

let stop: (() => void) | undefined;
afterEach(() => {
  stop?.();
  vi.useRealTimers();
});

describe("onSessionsChanged", () => {
  it("hands a page filtering by type every event of a burst, not only the last", () => {
    vi.useFakeTimers();
    const seen: string[] = [];
    let calls = 0;
    stop = onSessionsChanged((_last, burst) => {
      calls += 1;
      for (const c of burst ?? []) seen.push(c.message?.event ?? "");
    }, 300);
    emit(change("image.updated", { image: { state: "ready" } }));
    vi.advanceTimersByTime(100);
    emit(change("notification.created", { notification: { kind: "image_build.finished" } }));
    vi.advanceTimersByTime(100);
    emit(change("session.updated", { session_id: "ses_a" }));
    expect(calls).toBe(0);
    vi.advanceTimersByTime(300);
    expect(calls).toBe(1);
    expect(seen).toEqual(["image.updated", "notification.created", "session.updated"]);
  });

  it("passes the burst's last change first, and starts the next burst empty", () => {
    vi.useFakeTimers();
    const got: [string | undefined, number][] = [];
    stop = onSessionsChanged((last, burst) => got.push([last.message?.event, burst?.length ?? 0]), 50);
    emit(change("session.updated", { session_id: "ses_a" }));
    emit(change("session.deleted", { session_id: "ses_b" }));
    vi.advanceTimersByTime(60);
    emit(change("session.updated", { session_id: "ses_c" }));
    vi.advanceTimersByTime(60);
    expect(got).toEqual([
      ["session.deleted", 2],
      ["session.updated", 1],
    ]);
  });

  it("calls nothing after unsubscribing, even for a burst already under way", () => {
    vi.useFakeTimers();
    let calls = 0;
    stop = onSessionsChanged(() => {
      calls += 1;
    }, 50);
    emit(change("session.updated", { session_id: "ses_a" }));
    stop();
    vi.advanceTimersByTime(100);
    expect(calls).toBe(0);
  });

  it("hands over a burst that reaches its bound at once, so an unpausing stream is not held back for ever", () => {
    vi.useFakeTimers();
    const sizes: number[] = [];
    stop = onSessionsChanged((_last, burst) => sizes.push(burst.length), 300);
    for (let i = 0; i < MAX_BURST + 5; i++) {
      emit(change("session.updated", { session_id: `ses_${i}` }));
      vi.advanceTimersByTime(10);
    }
    expect(sizes).toEqual([MAX_BURST]);
    vi.advanceTimersByTime(300);
    expect(sizes).toEqual([MAX_BURST, 5]);
  });
});
