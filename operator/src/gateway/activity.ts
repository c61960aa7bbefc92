// Which traffic through the gateway a person caused, for the idle rule (docs/dev/idle-and-limits.md).
// A session's applications poll on their own (JupyterLab refreshes kernels, sessions, terminals and the
// file browser every few seconds; Yjs rooms send awareness heartbeats; kernels are asked for their info
// on every reconnect), so "a request passed" would keep every open tab busy for ever. The rules:
//
// HTTP: a request counts when it changes something (any method but GET, HEAD, OPTIONS), or when the
// browser says a person navigated (Sec-Fetch-Mode: navigate, or Sec-Fetch-Dest: document). A browser's
// background fetch/XHR (Sec-Fetch-Mode: cors, same-origin, no-cors) does not. A client that sends no
// Sec-Fetch headers at all (curl, scripts, old browsers) counts: when we cannot tell, we never call it idle.
//
// WebSocket: only frames from the browser to the application (client frames are masked, so they are read
// here without touching the proxied bytes), never control frames (ping, pong, close). On a Jupyter kernel
// channel, the automatic kernel_info_request and comm_info_request do not count; on a Yjs room only a
// document update counts (not awareness or the sync handshake). Every other data frame counts (keystrokes
// in a terminal, code-server's messages, an execute_request).
//
// The tracker keeps, per session, the last such moment; the reporter sends them to the control plane
// every `intervalMs` (with an empty list when nothing happened: the report is also the gateway's
// heartbeat, and a gateway that stops reporting makes the traffic signal unknown).
import { PeriodicPass } from "@berth/controllers/kube";
import type { InternalClient } from "../controlplane/client.ts";

export function isUserRequest(
  method: string | undefined,
  headers: Record<string, string | string[] | undefined>,
): boolean {
  const m = (method ?? "GET").toUpperCase();
  if (m === "HEAD" || m === "OPTIONS") return false;
  if (m !== "GET") return true;
  const mode = headers["sec-fetch-mode"];
  const dest = headers["sec-fetch-dest"];
  if (mode === undefined && dest === undefined) return true;
  return mode === "navigate" || dest === "document";
}

const AUTOMATIC_KERNEL_MESSAGES = /"msg_type"\s*:\s*"(kernel_info_request|comm_info_request)"/;

/** Whether a client data frame on the socket at `path` is a person's doing. */
export function isUserFrame(path: string, opcode: number, payload: Buffer, compressed: boolean): boolean {
  if (opcode !== 1 && opcode !== 2) return false; // continuation counted with its first frame; control frames never
  if (compressed) return true; // cannot look inside: count it
  if (/\/api\/kernels\/[^/]+\/channels/.test(path)) return !AUTOMATIC_KERNEL_MESSAGES.test(payload.toString("latin1"));
  if (/\/api\/collaboration\/room\//.test(path)) return payload[0] === 0 && payload[1] === 2;
  return true;
}

/**
 * Reads the frames of one direction of a WebSocket from the raw bytes (RFC 6455 framing), calling
 * `onFrame` with each frame's opcode and the first `keep` bytes of its payload, unmasked. It only reads:
 * the bytes are proxied untouched elsewhere.
 */
export class FrameReader {
  readonly #onFrame: (opcode: number, payload: Buffer, compressed: boolean) => void;
  readonly #keep: number;
  #header = Buffer.alloc(0);
  #remaining = 0;
  #opcode = 0;
  #compressed = false;
  #mask: Buffer | undefined;
  #offset = 0;
  #prefix: Buffer[] = [];
  #prefixLen = 0;
  #inFrame = false;
  #broken = false;

  constructor(onFrame: (opcode: number, payload: Buffer, compressed: boolean) => void, keep = 512) {
    this.#onFrame = onFrame;
    this.#keep = keep;
  }

  push(chunk: Buffer): void {
    let i = 0;
    while (i < chunk.length && !this.#broken) {
      if (!this.#inFrame) {
        const need = this.#headerLength();
        const take = Math.min(chunk.length - i, Math.max(2, need) - this.#header.length);
        this.#header = Buffer.concat([this.#header, chunk.subarray(i, i + take)]);
        i += take;
        const full = this.#headerLength();
        if (this.#header.length < full) continue;
        this.#startFrame();
        if (this.#remaining === 0) this.#endFrame();
        continue;
      }
      const take = Math.min(chunk.length - i, this.#remaining);
      if (this.#prefixLen < this.#keep) {
        const part = Buffer.from(chunk.subarray(i, i + Math.min(take, this.#keep - this.#prefixLen)));
        if (this.#mask)
          for (let k = 0; k < part.length; k++)
            part[k] = (part[k] as number) ^ (this.#mask[(this.#offset + k) % 4] as number);
        this.#prefix.push(part);
        this.#prefixLen += part.length;
      }
      this.#offset += take;
      this.#remaining -= take;
      i += take;
      if (this.#remaining === 0) this.#endFrame();
    }
  }

  #headerLength(): number {
    if (this.#header.length < 2) return 2;
    const b1 = this.#header[1] as number;
    const len7 = b1 & 0x7f;
    return 2 + (len7 === 126 ? 2 : len7 === 127 ? 8 : 0) + (b1 & 0x80 ? 4 : 0);
  }

  #startFrame(): void {
    const h = this.#header;
    const b0 = h[0] as number;
    const b1 = h[1] as number;
    const len7 = b1 & 0x7f;
    let at = 2;
    let len: number;
    if (len7 === 126) {
      len = h.readUInt16BE(2);
      at = 4;
    } else if (len7 === 127) {
      const big = h.readBigUInt64BE(2);
      if (big > BigInt(Number.MAX_SAFE_INTEGER)) {
        this.#broken = true; // not a stream we can follow: stop reading (the proxy goes on)
        return;
      }
      len = Number(big);
      at = 10;
    } else len = len7;
    this.#opcode = b0 & 0x0f;
    this.#compressed = (b0 & 0x40) !== 0;
    this.#mask = b1 & 0x80 ? h.subarray(at, at + 4) : undefined;
    this.#remaining = len;
    this.#offset = 0;
    this.#prefix = [];
    this.#prefixLen = 0;
    this.#inFrame = true;
  }

  #endFrame(): void {
    this.#onFrame(this.#opcode, Buffer.concat(this.#prefix), this.#compressed);
    this.#header = Buffer.alloc(0);
    this.#inFrame = false;
  }
}

/** The last moment a person used each session through this gateway process. */
export class ActivityTracker {
  readonly #last = new Map<string, number>();

  touch(sessionId: string, atMs: number): void {
    const before = this.#last.get(sessionId) ?? 0;
    if (atMs > before) this.#last.set(sessionId, atMs);
  }

  /** What happened since the last drain (and forgets it: the control plane keeps the latest). */
  drain(): { session: string; user_active_at: string }[] {
    const out = [...this.#last].map(([session, at]) => ({ session, user_active_at: new Date(at).toISOString() }));
    this.#last.clear();
    return out;
  }

  /** Puts back what a failed report could not deliver (a later touch wins). */
  restore(items: { session: string; user_active_at: string }[]): void {
    for (const i of items) this.touch(i.session, Date.parse(i.user_active_at));
  }
}

export interface ActivityReporterOptions {
  clusterId: string;
  client: Pick<InternalClient, "call">;
  tracker: ActivityTracker;
  /** Default 30 s. */
  intervalMs?: number;
  clock?: { now(): number };
  onReport?: (ok: boolean, message?: string) => void;
}

/** Sends the tracker's news every interval, an empty report when there is none (the heartbeat). */
export class ActivityReporter {
  readonly #o: ActivityReporterOptions;
  readonly #pass: PeriodicPass;

  constructor(o: ActivityReporterOptions) {
    this.#o = o;
    // report() never throws: a failed send is put back on the tracker and told to onReport.
    this.#pass = new PeriodicPass({
      intervalMs: o.intervalMs ?? 30_000,
      pass: () => this.report(),
      onError: (e) => o.onReport?.(false, (e as Error).message),
      unref: true,
    });
  }

  start(): void {
    this.#pass.start();
  }

  async report(): Promise<void> {
    const sessions = this.#o.tracker.drain();
    const now = this.#o.clock?.now() ?? Date.now();
    const r = await this.#o.client
      .call("POST", "/internal/v1/sessions/activity", {
        cluster_id: this.#o.clusterId,
        source: "gateway",
        observed_at: new Date(now).toISOString(),
        sessions,
      })
      .catch((e: unknown) => ({ ok: false as const, message: (e as Error).message, kind: "unavailable" }));
    // A session the control plane refuses (403: not this cluster's) is dropped, else the report would fail for ever.
    if (!r.ok && r.kind !== "forbidden" && r.kind !== "rejected") this.#o.tracker.restore(sessions);
    this.#o.onReport?.(r.ok, r.ok ? undefined : r.message);
  }

  /** Cancels the wait and resolves once the report in flight, if any, has ended. */
  stop(): Promise<void> {
    return this.#pass.stop();
  }
}
