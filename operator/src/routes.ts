// GET /routes on the operator's status port: the session gateway's table of where each session's
// application answers (controllers/src/mirror/routes.ts), streamed as lines of JSON:
//
//   {"routes":{"ses-abc":{"host":"10.1.2.3","port":8888},…}}   first: the whole table
//   {"cr":"ses-abc","route":{"host":"10.1.2.4","port":8888}}    then each change as it is seen
//   {"cr":"ses-abc","route":null}                               (paused, restarting, gone)
//   {}                                                          every heartbeatMs, so a silent peer shows
//
// Only the leader has the table (its pod watch); a follower, or a leader whose watch is not synced yet,
// answers 503 and the gateway tries again. The caller shows the cluster's operator token (the gateway
// holds it to call the control plane): pod addresses are no secret, but nobody else needs them.
import { timingSafeEqual } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { SessionRoutes } from "@berth/controllers";

export interface RoutesFeedOptions {
  routes: SessionRoutes;
  /** True while this operator leads and its pod watch has listed once. */
  ready: () => boolean;
  tokenFile: string;
  heartbeatMs?: number;
}

export interface RoutesFeed {
  handle(path: string, req: IncomingMessage, res: ServerResponse): boolean;
  /** Ends every open stream (leadership lost, stopping): the gateways reconnect to the new leader. */
  closeAll(): void;
  readonly streams: number;
}

export function routesFeed(o: RoutesFeedOptions): RoutesFeed {
  const open = new Set<ServerResponse>();
  const heartbeatMs = o.heartbeatMs ?? 10_000;

  async function authorized(req: IncomingMessage): Promise<boolean> {
    const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? "");
    if (!m) return false;
    const token = (await readFile(o.tokenFile, "utf8").catch(() => "")).trim();
    const a = Buffer.from(m[1] as string);
    const b = Buffer.from(token);
    return token !== "" && a.length === b.length && timingSafeEqual(a, b);
  }

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!(await authorized(req))) {
      res.writeHead(401, { "content-type": "text/plain" }).end("the cluster's operator token is required\n");
      return;
    }
    if (!o.ready()) {
      res.writeHead(503, { "content-type": "text/plain", "retry-after": "1" }).end("not the leader, or not synced\n");
      return;
    }
    res.writeHead(200, { "content-type": "application/x-ndjson", "cache-control": "no-store" });
    res.write(`${JSON.stringify({ routes: o.routes.snapshot() })}\n`);
    const unsubscribe = o.routes.subscribe((c) => {
      res.write(`${JSON.stringify({ cr: c.cr, route: c.route ?? null })}\n`);
    });
    const beat = setInterval(() => res.write("{}\n"), heartbeatMs);
    open.add(res);
    res.on("close", () => {
      clearInterval(beat);
      unsubscribe();
      open.delete(res);
    });
  }

  return {
    handle(path, req, res) {
      if (path !== "/routes") return false;
      serve(req, res).catch(() => res.destroy());
      return true;
    },
    closeAll() {
      for (const res of open) res.end();
    },
    get streams() {
      return open.size;
    },
  };
}
