// biome-ignore-all lint/suspicious/noExplicitAny: events carry the API's JSON as it comes
// The sessions' event stream as a journey reads it: every event kept in order, waited on with a deadline.

/** A minimal SSE reader over fetch (the bearer token cannot go through EventSource). */
export async function openEventStream(url: string, token: string, lastEventId?: string) {
  const ac = new AbortController();
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${token}`, ...(lastEventId ? { "last-event-id": lastEventId } : {}) },
    signal: ac.signal,
  });
  if (res.status !== 200 || !res.body) throw new Error(`stream answered ${res.status}`);
  const events: { id?: string; event: string; data: any }[] = [];
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  const pump = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buf += decoder.decode(value, { stream: true });
        let i = buf.indexOf("\n\n");
        while (i >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          i = buf.indexOf("\n\n");
          const e: { id?: string; event: string; data: any } = { event: "message", data: undefined };
          for (const line of block.split("\n")) {
            if (line.startsWith("id: ")) e.id = line.slice(4);
            else if (line.startsWith("event: ")) e.event = line.slice(7);
            else if (line.startsWith("data: ")) e.data = JSON.parse(line.slice(6));
          }
          if (e.data !== undefined) events.push(e);
        }
      }
    } catch {
      // aborted
    }
  })();
  return {
    events,
    headers: res.headers,
    async waitFor(pred: (e: { id?: string; event: string; data: any }) => boolean, what: string, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hit = events.find(pred);
        if (hit) return hit;
        if (Date.now() > deadline)
          throw new Error(
            `no event: ${what}; got ${events.map((e) => `${e.event}:${e.data?.session?.phase ?? ""}`).join(", ")}`,
          );
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async close() {
      ac.abort();
      await pump;
    },
  };
}
