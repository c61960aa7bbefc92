// The stream side of event-streams.ts, in its own process (forked, IPC) so the API's event loop and the
// readers' never share a core's time slice: opens authenticated GET /api/v1/sessions/events streams, and
// measures each session event's delivery delay (arrival here minus the event's `at`, the commit-time
// clock of the same machine) and each stream's heartbeat gaps.
//   messages in:  {tokens} (first; too many for the environment) | {open: total} | {reset: true} | {report: true} | {stop: true}
//   messages out: {opened, failed} | {report: {...}}
import { request } from "node:http";
import { upperPercentile } from "./kit/percentile.ts";

const url = new URL(process.env.BENCH_API_URL ?? "");
let tokens: string[] = [];
const HEARTBEAT_MS = Number(process.env.BENCH_HEARTBEAT_MS ?? "15000");

let delays: number[] = [];
let beatsOnTime = 0;
let beatsLate = 0;
let worstGap = 0;
let ended = 0;
let errors = 0;
const streams: { close(): void }[] = [];

function open(i: number): Promise<boolean> {
  const token = tokens[i % tokens.length] as string;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (ok: boolean) => {
      if (!settled) {
        settled = true;
        resolve(ok);
      }
    };
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: "/api/v1/sessions/events",
        headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" },
        agent: false,
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          settle(false);
          return;
        }
        res.setEncoding("utf8");
        let buf = "";
        let lastBeat = 0;
        res.on("data", (chunk: string) => {
          buf += chunk;
          let cut = buf.indexOf("\n\n");
          while (cut >= 0) {
            const ev = buf.slice(0, cut);
            buf = buf.slice(cut + 2);
            cut = buf.indexOf("\n\n");
            const now = Date.now();
            if (ev.includes("event: heartbeat")) {
              if (lastBeat === 0) settle(true);
              else {
                const gap = now - lastBeat;
                worstGap = Math.max(worstGap, gap);
                if (gap <= HEARTBEAT_MS + 1000) beatsOnTime++;
                else beatsLate++;
              }
              lastBeat = now;
            } else if (ev.includes("event: session.")) {
              const at = /"at":"([^"]+)"/.exec(ev)?.[1];
              if (at) delays.push(now - Date.parse(at));
            } else if (ev.includes("event: error")) errors++;
          }
        });
        res.on("close", () => {
          ended++;
          settle(false);
        });
      },
    );
    req.on("error", () => {
      errors++;
      settle(false);
    });
    req.end();
    streams.push({ close: () => req.destroy() });
  });
}

process.on(
  "message",
  async (m: { tokens?: string[]; open?: number; reset?: boolean; report?: boolean; stop?: boolean }) => {
    if (m.tokens) tokens = m.tokens;
    else if (m.open !== undefined) {
      let failed = 0;
      const from = streams.length;
      // 100 at a time: a burst of thousands of connects is a different test (of the accept queue).
      for (let i = from; i < m.open; i += 100) {
        const batch = [];
        for (let j = i; j < Math.min(m.open, i + 100); j++) batch.push(open(j));
        failed += (await Promise.all(batch)).filter((ok) => !ok).length;
      }
      process.send?.({ opened: streams.length, failed });
    } else if (m.reset) {
      delays = [];
      beatsOnTime = 0;
      beatsLate = 0;
      worstGap = 0;
      ended = 0;
      errors = 0;
    } else if (m.report) {
      const sorted = delays.toSorted((a, b) => a - b);
      process.send?.({
        report: {
          events: sorted.length,
          p50: upperPercentile(sorted, 50, 0),
          p99: upperPercentile(sorted, 99, 0),
          max: sorted.at(-1) ?? 0,
          beatsOnTime,
          beatsLate,
          worstGap,
          ended,
          errors,
        },
      });
    } else if (m.stop) {
      for (const s of streams) s.close();
      process.exit(0);
    }
  },
);
process.send?.({ ready: true });
