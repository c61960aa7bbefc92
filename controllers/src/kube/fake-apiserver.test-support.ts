// A scripted apiserver on loopback, for what only real HTTP shows: 410 in both forms, a cut connection,
// a server-side end of a watch, a request that never gets an answer.
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";

export interface Thing {
  metadata: { name: string; resourceVersion: string };
  spec: { v: number };
}

export class FakeApiserver {
  items = new Map<string, Thing>();
  rv = 100;
  lists = 0;
  watches: URLSearchParams[] = [];
  /** Headers of every request, in order. */
  requests: {
    method: string;
    url: string;
    userAgent: string | undefined;
    contentType: string | undefined;
    authorization: string | undefined;
  }[] = [];
  /** Fixed answers by path (a log's text, a refusal), served instead of a list. */
  answers = new Map<string, { status: number; body: string; contentType?: string }>();
  open: ServerResponse | undefined;
  /** How the next watches answer; an empty plan keeps the stream open. */
  plan: ("stream" | "410-status")[] = [];
  /** Paths that never answer (a hung apiserver). */
  silent = new Set<string>();
  readonly server: Server;
  url = "";

  constructor() {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://x");
      this.requests.push({
        method: req.method ?? "",
        url: req.url ?? "",
        userAgent: req.headers["user-agent"],
        contentType: req.headers["content-type"],
        authorization: req.headers.authorization,
      });
      if (this.silent.has(url.pathname)) return;
      const answer = this.answers.get(url.pathname);
      if (answer) {
        res.writeHead(answer.status, { "content-type": answer.contentType ?? "application/json" });
        res.end(answer.body);
        return;
      }
      if (url.searchParams.get("watch") !== "true") {
        this.lists++;
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ metadata: { resourceVersion: String(this.rv) }, items: [...this.items.values()] }));
        return;
      }
      this.watches.push(url.searchParams);
      const step = this.plan.shift() ?? "stream";
      if (step === "410-status") {
        res.writeHead(410, { "content-type": "application/json" });
        res.end(JSON.stringify({ kind: "Status", code: 410, reason: "Expired", message: "too old resource version" }));
        return;
      }
      res.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" });
      res.flushHeaders();
      this.open = res;
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** A kubeconfig for this server with a bearer token. */
  kubeConfig(): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromClusterAndUser({ name: "fake", server: this.url, skipTLSVerify: true }, { name: "u", token: "t" });
    return kc;
  }

  set(name: string, v: number): Thing {
    const o = { metadata: { name, resourceVersion: String(++this.rv) }, spec: { v } };
    this.items.set(name, o);
    return o;
  }

  event(type: string, object: unknown): void {
    this.open?.write(`${JSON.stringify({ type, object })}\n`);
  }

  /** Connections still open (kept alive or in flight). */
  async connections(): Promise<number> {
    return new Promise((resolve, reject) => this.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

export async function until(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
