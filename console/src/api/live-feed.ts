// Live session changes: the SSE stream GET /api/v1/sessions/events read with fetch (EventSource cannot
// send the bearer token), resumed with Last-Event-ID. When the stream cannot be held the feed falls back
// to polling (the contract's rule: polling lists is the fallback) and keeps trying the stream again.
// The mode is public so the shell can show which one is in use.
import type { ApiClient } from "./client.ts";
import { type SseMessage, SseParser } from "./sse.ts";

export type LiveMode = "off" | "connecting" | "live" | "polling";

export interface LiveFeedOptions {
  api: ApiClient;
  path?: string;
  /** Interval of the polling fallback. */
  pollMs?: number;
  /** No byte (not even a heartbeat comment) for this long: the stream is considered dead. */
  idleMs?: number;
  /** First and largest wait before trying the stream again. */
  retryMinMs?: number;
  retryMaxMs?: number;
}

/** Fired for every stream message and on every poll tick: views refresh what they show. */
export interface LiveChange {
  source: "stream" | "poll";
  message?: SseMessage;
  /** The parsed JSON data of the message, when it is JSON. */
  data?: unknown;
}

export class LiveFeed extends EventTarget {
  #mode: LiveMode = "off";
  #abort: AbortController | undefined;
  #pollTimer: ReturnType<typeof setInterval> | undefined;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  #retryMs: number;
  #parser = new SseParser();
  readonly #o: Required<LiveFeedOptions>;

  constructor(opts: LiveFeedOptions) {
    super();
    this.#o = {
      path: "/api/v1/sessions/events",
      pollMs: 3000,
      idleMs: 45_000,
      retryMinMs: 2000,
      retryMaxMs: 30_000,
      ...opts,
    };
    this.#retryMs = this.#o.retryMinMs;
  }

  get mode(): LiveMode {
    return this.#mode;
  }

  start(): void {
    if (this.#mode !== "off") return;
    this.#connect();
  }

  stop(): void {
    this.#abort?.abort();
    this.#abort = undefined;
    clearInterval(this.#pollTimer);
    this.#pollTimer = undefined;
    clearTimeout(this.#retryTimer);
    this.#parser = new SseParser();
    this.#setMode("off");
  }

  #setMode(m: LiveMode): void {
    if (m === this.#mode) return;
    this.#mode = m;
    this.dispatchEvent(new Event("mode"));
  }

  #emit(change: LiveChange): void {
    this.dispatchEvent(new CustomEvent<LiveChange>("change", { detail: change }));
  }

  async #connect(): Promise<void> {
    if (this.#mode !== "polling") this.#setMode("connecting");
    const abort = new AbortController();
    this.#abort = abort;
    let idle: ReturnType<typeof setTimeout> | undefined;
    const kick = () => {
      clearTimeout(idle);
      idle = setTimeout(() => abort.abort(), this.#o.idleMs);
    };
    try {
      const headers: Record<string, string> = { Accept: "text/event-stream" };
      if (this.#parser.lastEventId) headers["Last-Event-ID"] = this.#parser.lastEventId;
      kick();
      const res = await this.#o.api.fetchRaw(this.#o.path, { headers, signal: abort.signal, cache: "no-store" });
      if (!res.body || !(res.headers.get("Content-Type") ?? "").includes("text/event-stream"))
        throw new Error("not an event stream");
      this.#stopPolling();
      this.#setMode("live");
      this.#retryMs = this.#o.retryMinMs;
      // Anything may have changed while we were not listening.
      this.#emit({ source: "stream" });
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        kick();
        for (const message of this.#parser.push(value)) {
          // Heartbeats only prove the stream is alive (the idle timer above); they change nothing.
          if (message.event === "heartbeat") continue;
          let data: unknown;
          try {
            data = JSON.parse(message.data);
          } catch {
            data = undefined;
          }
          this.#emit({ source: "stream", message, data });
        }
      }
    } catch {
      // Falls through to the fallback below; errors of the stream are expected (network, proxy, restart).
    } finally {
      clearTimeout(idle);
    }
    if (this.#abort !== abort || this.#mode === "off") return; // stopped on purpose
    this.#startPolling();
    const wait = this.#parser.retry ?? this.#retryMs;
    this.#retryMs = Math.min(this.#retryMs * 2, this.#o.retryMaxMs);
    this.#retryTimer = setTimeout(() => void this.#connect(), wait);
  }

  #startPolling(): void {
    this.#setMode("polling");
    if (this.#pollTimer) return;
    this.#emit({ source: "poll" });
    this.#pollTimer = setInterval(() => this.#emit({ source: "poll" }), this.#o.pollMs);
  }

  #stopPolling(): void {
    clearInterval(this.#pollTimer);
    this.#pollTimer = undefined;
  }
}
