// biome-ignore-all lint/suspicious/noExplicitAny: the apiserver's JSON as it comes
// What a rolling update does to the people and processes using Berth, watched while it runs (the upgrade
// test): a light request loop through the API's Service, a session event stream held as the console holds
// it (resumed from Last-Event-ID after the server's retry hint), and the worker's leader Lease.
import type { ApiClient } from "@berth/console/client";
import { ApiError } from "@berth/console/client";
import { SseParser } from "@berth/console/sse";
import type { KubeHttp } from "../testbed/kube.ts";

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      resolve();
    });
  });

export interface Failure {
  at: number;
  operation: string;
  /** The answer's status; 0 when none came (refused, reset, timed out). */
  status: number;
  /** The error envelope's code, when answered. */
  code: string | undefined;
  message: string;
}

export interface Traffic {
  sent: number;
  failures: Failure[];
  stop(): Promise<void>;
}

/**
 * Reads in a loop, one at a time, each within `timeoutMs`: what a console open on the sessions page asks.
 * Every refusal or missing answer is kept with its time.
 */
export function requestLoop(
  api: () => ApiClient,
  calls: Record<string, (api: ApiClient, signal: AbortSignal) => Promise<unknown>>,
  o: { everyMs: number; timeoutMs: number },
): Traffic {
  const stopped = new AbortController();
  const t: Traffic = { sent: 0, failures: [], stop: async () => {} };
  const ops = Object.entries(calls);
  const loop = (async () => {
    for (let i = 0; !stopped.signal.aborted; i++) {
      const [operation, call] = ops[i % ops.length] as [string, (typeof calls)[string]];
      const at = Date.now();
      t.sent++;
      try {
        await call(api(), AbortSignal.timeout(o.timeoutMs));
      } catch (e) {
        t.failures.push({
          at,
          operation,
          status: e instanceof ApiError ? e.status : 0,
          code: e instanceof ApiError ? e.code : undefined,
          message: (e as Error).message.split("\n")[0] ?? "",
        });
      }
      await sleep(o.everyMs, stopped.signal);
    }
  })();
  t.stop = async () => {
    stopped.abort();
    await loop;
  };
  return t;
}

export interface StreamWatch {
  /** Every message with the time it came (heartbeats included). */
  messages: { at: number; event: string; id: string | undefined }[];
  /** When each connection was answered, and when and why each ended. */
  connected: number[];
  ended: { at: number; why: string }[];
  stop(): Promise<void>;
}

/**
 * GET /api/v1/sessions/events held as the console's live feed holds it (console/src/api/live-feed.ts): a
 * silent stream (no heartbeat for `idleMs`) is dropped, and each reconnection waits the server's `retry`
 * and sends the last id seen as Last-Event-ID.
 */
export function followEvents(api: () => ApiClient, o: { idleMs: number }): StreamWatch {
  const stopped = new AbortController();
  const w: StreamWatch = { messages: [], connected: [], ended: [], stop: async () => {} };
  let lastId: string | undefined;
  let retryMs = 2000;
  const loop = (async () => {
    while (!stopped.signal.aborted) {
      const conn = new AbortController();
      const abortAll = () => conn.abort();
      stopped.signal.addEventListener("abort", abortAll);
      let idle: NodeJS.Timeout | undefined;
      const kick = () => {
        clearTimeout(idle);
        idle = setTimeout(() => conn.abort(new Error(`silent for ${o.idleMs} ms`)), o.idleMs);
      };
      const parser = new SseParser();
      try {
        kick();
        const res = await api().fetchRaw("/api/v1/sessions/events", {
          headers: { accept: "text/event-stream", ...(lastId ? { "last-event-id": lastId } : {}) },
          signal: conn.signal,
        });
        if (!res.body) throw new Error("no body");
        w.connected.push(Date.now());
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          kick();
          for (const m of parser.push(value)) w.messages.push({ at: Date.now(), event: m.event, id: m.id });
          lastId = parser.lastEventId ?? lastId;
          retryMs = parser.retry ?? retryMs;
        }
        w.ended.push({ at: Date.now(), why: "the server ended it" });
      } catch (e) {
        if (!stopped.signal.aborted)
          w.ended.push({ at: Date.now(), why: (conn.signal.reason as Error | undefined)?.message ?? String(e) });
      } finally {
        clearTimeout(idle);
        stopped.signal.removeEventListener("abort", abortAll);
      }
      await sleep(retryMs, stopped.signal);
    }
  })();
  w.stop = async () => {
    stopped.abort();
    await loop;
  };
  return w;
}

/** The longest time between two messages of the stream within [from, to], the ends counted. */
export function longestGap(w: StreamWatch, from: number, to: number): number {
  const times = [from, ...w.messages.map((m) => m.at).filter((t) => t > from && t < to), to];
  return times.slice(1).reduce((max, t, i) => Math.max(max, t - (times[i] as number)), 0);
}

export interface LeaseWatch {
  /** Each holder seen, with when it was first seen ("" for a released lease). */
  holders: { at: number; holder: string; transitions: number }[];
  /** When each worker pod was first seen terminating. */
  terminating: Map<string, number>;
  stop(): Promise<void>;
}

/** The worker's Lease and its pods, read every `everyMs`. */
export function watchLease(
  kube: KubeHttp,
  o: { namespace: string; lease: string; podSelector: string; everyMs: number },
): LeaseWatch {
  const stopped = new AbortController();
  const w: LeaseWatch = { holders: [], terminating: new Map(), stop: async () => {} };
  const loop = (async () => {
    while (!stopped.signal.aborted) {
      const [lease, pods] = await Promise.all([
        kube.json<any>("GET", `/apis/coordination.k8s.io/v1/namespaces/${o.namespace}/leases/${o.lease}`),
        kube.json<any>(
          "GET",
          `/api/v1/namespaces/${o.namespace}/pods?labelSelector=${encodeURIComponent(o.podSelector)}`,
        ),
      ]).catch(() => [undefined, undefined]);
      const now = Date.now();
      if (lease) {
        const holder = lease.spec.holderIdentity ?? "";
        if (w.holders.at(-1)?.holder !== holder)
          w.holders.push({ at: now, holder, transitions: lease.spec.leaseTransitions ?? 0 });
      }
      for (const p of pods?.items ?? [])
        if (p.metadata.deletionTimestamp && !w.terminating.has(p.metadata.name))
          w.terminating.set(p.metadata.name, now);
      await sleep(o.everyMs, stopped.signal);
    }
  })();
  w.stop = async () => {
    stopped.abort();
    await loop;
  };
  return w;
}

/**
 * Each move of the lease to another holder: from when the one before was seen terminating (or, if it never
 * was, seen losing it) to when the next held it.
 */
export function handOvers(w: LeaseWatch): { from: string; to: string; ms: number }[] {
  const held = w.holders.filter((h) => h.holder);
  const out: { from: string; to: string; ms: number }[] = [];
  for (let i = 1; i < held.length; i++) {
    const prev = held[i - 1] as (typeof held)[number];
    const next = held[i] as (typeof held)[number];
    if (prev.holder === next.holder) continue;
    const lost = w.holders.find((h) => h.at > prev.at && h.holder !== prev.holder)?.at ?? next.at;
    const start = Math.min(w.terminating.get(prev.holder) ?? lost, lost);
    out.push({ from: prev.holder, to: next.holder, ms: next.at - start });
  }
  return out;
}

export interface ReadyWatch {
  /** Intervals in which the pod was terminating, absent or not Ready (`to` undefined: still down). */
  down: { from: number; to: number | undefined }[];
  stop(): Promise<void>;
}

/** One pod (a StatefulSet's, which comes back under its name), read every `everyMs`. */
export function watchReady(kube: KubeHttp, o: { namespace: string; pod: string; everyMs: number }): ReadyWatch {
  const stopped = new AbortController();
  const w: ReadyWatch = { down: [], stop: async () => {} };
  const loop = (async () => {
    while (!stopped.signal.aborted) {
      const got = await kube.raw<any>("GET", `/api/v1/namespaces/${o.namespace}/pods/${o.pod}`).catch(() => undefined);
      const p = got?.status === 200 ? got.body : undefined;
      const up =
        !!p &&
        !p.metadata.deletionTimestamp &&
        p.status.conditions?.some((c: any) => c.type === "Ready" && c.status === "True");
      const last = w.down.at(-1);
      const now = Date.now();
      if (!up && (!last || last.to !== undefined)) w.down.push({ from: now, to: undefined });
      if (up && last && last.to === undefined) last.to = now;
      await sleep(o.everyMs, stopped.signal);
    }
  })();
  w.stop = async () => {
    stopped.abort();
    await loop;
  };
  return w;
}
