// The long reads of a client (client.ts), each on a connection of its own so that it holds none of the
// request pool's sockets: a streamed GET (pods/log) and a watch, whose events are read line by line.
import * as http from "node:http";
import * as https from "node:https";
import type { RequestOptions, WatchEvent } from "./api.ts";
import type { Connection } from "./connection.ts";
import { KubeError, KubeTransportError, transportError } from "./errors.ts";

export interface StreamOptions {
  query?: RequestOptions["query"];
  /** Default `text/plain, *\/*` (pods/log). */
  accept?: string;
  /** The caller gives up (the reader went away): the stream ends, reason ABORTED before an answer. */
  signal?: AbortSignal;
  /** Until the apiserver answers; the stream may then stay open for ever. Default 15 s. */
  connectTimeoutMs?: number;
}

/**
 * A GET whose 200 answer is handed over as a stream as soon as it starts (pods/log, followed or not);
 * rejects with KubeError for another answer, KubeTransportError for none. The stream has a connection
 * of its own, closed when it ends.
 */
export async function openStream(
  conn: Connection,
  path: string,
  opts: StreamOptions = {},
): Promise<http.IncomingMessage> {
  const prepared = await conn.prepare();
  const url = conn.url(path, opts.query);
  const where = `GET ${url.host}${url.pathname}`;
  const agent = conn.ownAgent(prepared.secure);
  return new Promise((resolve, reject) => {
    const deadline = setTimeout(
      () => req.destroy(new KubeTransportError("TIMEOUT", `${where}: no answer before the deadline`)),
      opts.connectTimeoutMs ?? 15_000,
    );
    const headers = { ...prepared.headers, accept: opts.accept ?? "text/plain, */*" };
    const req = (prepared.secure ? https : http).request(
      url,
      { method: "GET", headers, agent, ...(opts.signal ? { signal: opts.signal } : {}) },
      (res) => {
        clearTimeout(deadline);
        if (res.statusCode === 200) {
          res.on("close", () => agent.destroy());
          resolve(res);
          return;
        }
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          agent.destroy();
          const text = Buffer.concat(chunks).toString("utf8");
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // plain text error
          }
          reject(new KubeError("GET", url.pathname, res.statusCode ?? 0, body));
        });
      },
    );
    req.on("error", (e: NodeJS.ErrnoException) => {
      clearTimeout(deadline);
      agent.destroy();
      if (e instanceof KubeTransportError) reject(e);
      else
        reject(
          new KubeTransportError(
            e.name === "AbortError" ? "ABORTED" : (e.code ?? "UNKNOWN"),
            `${where}: ${e.message}`,
            e,
          ),
        );
    });
    req.end();
  });
}

/** A watch of `path`, its events in order (api.ts KubeApi.watch says how it ends). */
export async function watchEvents(
  conn: Connection,
  path: string,
  query: RequestOptions["query"],
  onEvent: (e: WatchEvent) => void,
  opts: { signal?: AbortSignal; idleTimeoutMs: number; onOpen?: () => void },
): Promise<void> {
  const prepared = await conn.prepare();
  const url = conn.url(path, { ...query, watch: "true" });
  if (opts.signal?.aborted) return;
  // Watches get their own connection: a long-lived stream must not hold one of the request pool's sockets,
  // nor linger in Node's global (keep-alive) agent after close().
  const agent = conn.ownAgent(prepared.secure);
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(idle);
      opts.signal?.removeEventListener("abort", onAbort);
      agent.destroy();
      if (err && !opts.signal?.aborted) reject(err);
      else resolve();
    };
    let idle: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(
        () => req.destroy(new Error(`watch ${path} was silent for ${opts.idleTimeoutMs} ms`)),
        opts.idleTimeoutMs,
      );
    };
    const onAbort = () => req.destroy();
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    const req = (prepared.secure ? https : http).request(
      url,
      { method: "GET", headers: prepared.headers, agent },
      (res) => {
        if (res.statusCode !== 200) {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            let body: unknown;
            try {
              body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
            } catch {
              body = undefined;
            }
            finish(new KubeError("WATCH", path, res.statusCode ?? 0, body));
          });
          res.on("error", (e) => finish(e));
          return;
        }
        arm();
        opts.onOpen?.();
        let buffered = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          arm();
          buffered += chunk;
          // Lines are cut at an offset and the rest kept once per chunk: cutting the buffer after every
          // line copied the chunk's remainder per event (a list of events arrives in large chunks).
          let start = 0;
          let nl = buffered.indexOf("\n");
          while (nl >= 0) {
            const line = buffered.slice(start, nl).trim();
            start = nl + 1;
            nl = buffered.indexOf("\n", start);
            if (line === "") continue;
            let stop: Error | undefined;
            try {
              onEvent(JSON.parse(line) as WatchEvent);
            } catch (e) {
              stop =
                e instanceof SyntaxError ? new Error(`watch ${path}: unreadable event: ${e.message}`) : (e as Error);
            }
            if (stop) {
              // Settle with the caller's error first: destroying the request raises errors of its own
              // ("aborted", "connection lost"), and which comes first must not decide whether a 410 is seen.
              finish(stop);
              req.destroy();
              return;
            }
          }
          buffered = start === 0 ? buffered : buffered.slice(start);
        });
        res.on("end", () => finish());
        res.on("close", () => finish(res.complete ? undefined : new Error(`watch ${path}: connection lost`)));
        res.on("error", (e) => finish(e));
      },
    );
    arm();
    req.on("error", (e) => finish(transportError(e, "WATCH", url, opts.signal)));
    req.end();
  });
}
