// The build pods' logs (builds/controller.ts): each running build's log is followed (`follow=true`, one
// stream per build, followed again from its cursor when the stream ends) and its new lines sent in
// batches. When the Job ends, drain() reads what the stream had not shown yet and sends every line, so
// the last lines (with the builder's digest line) are sent before Succeeded is reported.
import type { Readable } from "node:stream";
import { LogCursor } from "@berth/crds/internal-plane";
import type { Logger } from "pino";
import type { KubeApi } from "../kube/client.ts";
import { errInfo } from "../kube/errors.ts";

export interface BuildLogLine {
  at: string;
  text: string;
}

export type StreamingKube = KubeApi & {
  stream?(path: string, opts: { query?: Record<string, string>; signal?: AbortSignal }): Promise<Readable>;
};

export interface BuildLogsDeps {
  kube: StreamingKube;
  namespace: string;
  /** Sends log lines of one build, in order; throws when the control plane did not take them (retried). */
  sendLogs(buildId: string, lines: BuildLogLine[]): Promise<void>;
  counts: { logBatches: number; streams: number };
  log: Logger;
  flushMs: number;
}

/** One followed log: its stream, the lines not sent yet, and where the sent ones end. */
interface Follower {
  pod: string;
  abort: AbortController;
  cursor: LogCursor;
  pending: BuildLogLine[];
  running: Promise<void>;
  flushing: Promise<void> | undefined;
  timer: NodeJS.Timeout | undefined;
}

const MAX_BATCH = 500;

export class BuildLogs {
  readonly #d: BuildLogsDeps;
  /** Per ImageBuild name. */
  readonly #followers = new Map<string, Follower>();
  #stopped = false;

  constructor(d: BuildLogsDeps) {
    this.#d = d;
  }

  /** Follows the pod's log, unless it is followed already (or the build ended); a new pod replaces the old. */
  follow(name: string, buildId: string, pod: string, finished: boolean): void {
    const existing = this.#followers.get(name);
    if (existing?.pod === pod || finished) return;
    if (existing) existing.abort.abort();
    const f: Follower = {
      pod,
      abort: new AbortController(),
      cursor: existing?.cursor ?? new LogCursor(),
      pending: existing?.pending ?? [],
      running: Promise.resolve(),
      flushing: undefined,
      timer: undefined,
    };
    this.#followers.set(name, f);
    f.running = (async () => {
      while (!f.abort.signal.aborted && !this.#stopped) {
        try {
          await this.#read(f, buildId, true);
        } catch (e) {
          if (f.abort.signal.aborted) return;
          this.#d.log.debug({ build: buildId, error: errInfo(e) }, "following a build log failed; following again");
        }
        // The stream ended (the container stopped, or the connection broke): follow again from the cursor
        // until the Job's end stops it.
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
  }

  /** The Job ended: stop following, read what the stream had not shown yet, and send every line. */
  async drain(name: string, buildId: string, pod: string | undefined): Promise<void> {
    let f = this.#followers.get(name);
    if (!f && pod) {
      f = {
        pod,
        abort: new AbortController(),
        cursor: new LogCursor(),
        pending: [],
        running: Promise.resolve(),
        flushing: undefined,
        timer: undefined,
      };
      this.#followers.set(name, f);
    }
    if (!f) return;
    f.abort.abort();
    clearTimeout(f.timer);
    f.timer = undefined;
    await f.running;
    try {
      await this.#read(f, buildId, false);
    } catch (e) {
      this.#d.log.debug({ build: buildId, error: errInfo(e) }, "reading the end of a build log failed");
    }
    await this.#flush(f, buildId);
    this.#followers.delete(name);
  }

  /** The ImageBuild is gone: its log is no longer followed, and what was not sent is dropped. */
  forget(name: string): void {
    const f = this.#followers.get(name);
    if (!f) return;
    f.abort.abort();
    clearTimeout(f.timer);
    this.#followers.delete(name);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const f of this.#followers.values()) {
      f.abort.abort();
      clearTimeout(f.timer);
    }
  }

  /** Resolves when every follow has ended (after stop()). */
  async ended(): Promise<void> {
    await Promise.allSettled([...this.#followers.values()].map((f) => f.running));
  }

  /** Reads the log (followed, or what is there now) from the cursor's second on; admits only new lines. */
  async #read(f: Follower, buildId: string, followed: boolean): Promise<void> {
    const kube = this.#d.kube;
    const stream = kube.stream;
    if (!stream) throw new Error("this Kubernetes client cannot stream");
    const since = f.cursor.at ? `${f.cursor.at.slice(0, 19)}Z` : undefined;
    const res = await stream.call(kube, `/api/v1/namespaces/${this.#d.namespace}/pods/${f.pod}/log`, {
      query: { timestamps: "true", ...(followed ? { follow: "true" } : {}), ...(since ? { sinceTime: since } : {}) },
      ...(followed ? { signal: f.abort.signal } : {}),
    });
    if (followed) this.#d.counts.streams++;
    const admit = f.cursor.reader();
    let rest = "";
    const take = (line: string) => {
      if (line === "") return;
      const sp = line.indexOf(" ");
      const at = sp > 0 ? line.slice(0, sp) : line;
      if (!admit(at)) return;
      f.pending.push({ at, text: sp > 0 ? line.slice(sp + 1) : "" });
      if (followed) this.#schedule(f, buildId);
    };
    res.setEncoding("utf8");
    for await (const chunk of res as AsyncIterable<string>) {
      const parts = (rest + chunk).split("\n");
      rest = parts.pop() ?? "";
      for (const p of parts) take(p);
    }
    take(rest);
  }

  #schedule(f: Follower, buildId: string): void {
    if (f.timer || f.flushing) return;
    f.timer = setTimeout(
      () => {
        f.timer = undefined;
        void this.#flush(f, buildId).catch((e: unknown) => {
          this.#d.log.warn({ build: buildId, error: errInfo(e) }, "sending build log lines failed; sent again");
          setTimeout(() => this.#schedule(f, buildId), 1000).unref();
        });
      },
      f.pending.length >= MAX_BATCH ? 0 : this.#d.flushMs,
    );
  }

  async #flush(f: Follower, buildId: string): Promise<void> {
    while (f.flushing) await f.flushing;
    const run = (async () => {
      while (f.pending.length > 0) {
        const batch = f.pending.slice(0, MAX_BATCH);
        await this.#d.sendLogs(buildId, batch);
        this.#d.counts.logBatches++;
        f.pending.splice(0, batch.length);
      }
    })();
    f.flushing = run;
    try {
      await run;
    } finally {
      f.flushing = undefined;
    }
  }
}
