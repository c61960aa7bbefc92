import { afterEach, describe, expect, it } from "vitest";
import type { ApiClient } from "./client.ts";
import { type LiveChange, LiveFeed } from "./live-feed.ts";

function stream(chunks: string[]): Response {
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (const x of chunks) c.enqueue(new TextEncoder().encode(x));
      // left open, as a live stream is
    },
  });
  return new Response(body, { headers: { "Content-Type": "text/event-stream" } });
}

const until = async (pred: () => boolean, ms = 2000) => {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 5));
  }
};

let feed: LiveFeed | undefined;
afterEach(() => feed?.stop());

describe("the live session feed", () => {
  it("is live on the event stream and passes on session events, not heartbeats", async () => {
    const api = {
      fetchRaw: async () =>
        stream(["event: heartbeat\ndata: {}\n\n", 'id: 5\nevent: session.updated\ndata: {"session_id":"ses_a"}\n\n']),
    } as unknown as ApiClient;
    feed = new LiveFeed({ api });
    const changes: LiveChange[] = [];
    feed.addEventListener("change", (e) => changes.push((e as CustomEvent<LiveChange>).detail));
    feed.start();
    await until(() => changes.some((c) => c.message));
    expect(feed.mode).toBe("live");
    expect(changes.filter((c) => c.message).map((c) => [c.message?.event, c.data])).toEqual([
      ["session.updated", { session_id: "ses_a" }],
    ]);
  });

  it("falls back to polling when the stream cannot be held, and goes live again when it can", async () => {
    let fail = true;
    let attempts = 0;
    const api = {
      fetchRaw: async () => {
        attempts++;
        if (fail) throw new Error("connection reset");
        return stream([]);
      },
    } as unknown as ApiClient;
    feed = new LiveFeed({ api, pollMs: 20, retryMinMs: 30, retryMaxMs: 30 });
    let polls = 0;
    feed.addEventListener("change", (e) => {
      if ((e as CustomEvent<LiveChange>).detail.source === "poll") polls++;
    });
    feed.start();
    await until(() => feed?.mode === "polling" && polls >= 3);
    fail = false;
    await until(() => feed?.mode === "live");
    expect(attempts).toBeGreaterThan(1);
    const before = polls;
    await new Promise((r) => setTimeout(r, 80));
    expect(polls).toBe(before);
  });
});
