import { describe, expect, it } from "vitest";
import { SseParser } from "./sse.ts";

describe("the event-stream parser", () => {
  it("gives one message per blank line, with its event name, data and id", () => {
    const p = new SseParser();
    expect(p.push('event: session.updated\nid: 7\ndata: {"id":"a"}\n\n')).toEqual([
      { event: "session.updated", data: '{"id":"a"}', id: "7" },
    ]);
    expect(p.lastEventId).toBe("7");
  });

  it("joins data lines, ignores comments (heartbeats) and waits for the end of a message split across chunks", () => {
    const p = new SseParser();
    expect(p.push(": heartbeat\n\ndata: one\nda")).toEqual([]);
    expect(p.push("ta: two\r\n\r\n")).toEqual([{ event: "message", data: "one\ntwo", id: undefined }]);
  });

  it("keeps the last id across messages and reads the retry hint", () => {
    const p = new SseParser();
    p.push("retry: 1500\nid: 3\ndata: x\n\ndata: y\n\n");
    expect(p.retry).toBe(1500);
    expect(p.lastEventId).toBe("3");
  });
});
