// A stand-in for the control plane's internal listener: a real HTTP server on loopback that authenticates
// by a token table, checks the cluster like the real one (403 for another cluster's report), answers as
// docs/dev/internal-api.md says, and records every request. Tests and the inventory benchmark use it
// until the operator is wired to the real control plane.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { InventoryReport, MetricsForward } from "@berth/crds/internal-plane";

export interface RecordedRequest {
  method: string;
  path: string;
  /** The bearer token presented, or "" */
  token: string;
  body: unknown;
  status: number;
  /** Date.now() when the request arrived. */
  at: number;
}

export interface StubControlPlane {
  readonly url: string;
  /** token → cluster id. Edit freely: takes effect at the next request. */
  readonly tokens: Map<string, string>;
  readonly requests: RecordedRequest[];
  /** Accepted inventory reports, oldest first. */
  inventories(): InventoryReport[];
  /** The last accepted inventory of a cluster. */
  latestInventory(clusterId?: string): InventoryReport | undefined;
  /** Answer every request with this status until cleared (e.g. 503 for an outage). */
  failWith(status: number | undefined): void;
  /** Called with every accepted inventory report (benchmarks). */
  onInventory?: (report: InventoryReport, bytes: number) => void;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

function error(res: ServerResponse, status: number, code: string, message: string): void {
  send(res, status, { error: { code, message, details: {}, request_id: "stub", timestamp: new Date().toISOString() } });
}

export async function startStubControlPlane(
  opts: { tokens?: Record<string, string>; host?: string } = {},
): Promise<StubControlPlane> {
  const tokens = new Map(Object.entries(opts.tokens ?? {}));
  const requests: RecordedRequest[] = [];
  const accepted: InventoryReport[] = [];
  let failure: number | undefined;
  const latest = new Map<string, { nodes: number }>();

  const stub: StubControlPlane = {
    url: "",
    tokens,
    requests,
    inventories: () => accepted,
    latestInventory: (clusterId) => {
      for (let i = accepted.length - 1; i >= 0; i--) {
        const r = accepted[i] as InventoryReport;
        if (clusterId === undefined || r.cluster_id === clusterId) return r;
      }
      return undefined;
    },
    failWith: (status) => {
      failure = status;
    },
    close: async () => {},
  };

  const handle = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
    let body: unknown;
    try {
      body = raw === "" ? undefined : JSON.parse(raw);
    } catch {
      body = raw;
    }
    const rec: RecordedRequest = {
      method: req.method ?? "",
      path: req.url ?? "",
      token,
      body,
      status: 0,
      at: Date.now(),
    };
    requests.push(rec);
    const answer = (status: number, f: () => void) => {
      rec.status = status;
      f();
    };
    if (failure !== undefined)
      return answer(failure, () => error(res, failure as number, "unavailable", "stub outage"));
    const cluster = tokens.get(token);
    if (cluster === undefined)
      return answer(401, () => error(res, 401, "token_expired", "the operator token has expired"));
    if (req.method === "PUT" && req.url === "/internal/v1/inventory") {
      const report = body as InventoryReport;
      if (report?.cluster_id !== cluster)
        return answer(403, () =>
          error(res, 403, "forbidden", `token of ${cluster} cannot report for ${report?.cluster_id}`),
        );
      const previous = latest.get(cluster)?.nodes ?? 0;
      accepted.push(report);
      latest.set(cluster, { nodes: report.nodes.length });
      stub.onInventory?.(report, Buffer.byteLength(raw));
      return answer(200, () =>
        send(res, 200, { accepted: report.nodes.length, removed: Math.max(0, previous - report.nodes.length) }),
      );
    }
    if (req.method === "PUT" && req.url === "/internal/v1/storage") {
      const report = body as { cluster_id?: string };
      if (report?.cluster_id !== cluster)
        return answer(403, () =>
          error(res, 403, "forbidden", `token of ${cluster} cannot report for ${report?.cluster_id}`),
        );
      return answer(200, () => send(res, 200, { pools: 0, changed: 0 }));
    }
    if (req.method === "POST" && req.url === "/internal/v1/metrics") {
      const report = body as { cluster_id?: string; sources?: unknown[] };
      if (report?.cluster_id !== cluster)
        return answer(403, () =>
          error(res, 403, "forbidden", `token of ${cluster} cannot report for ${report?.cluster_id}`),
        );
      return answer(200, () => send(res, 200, { samples: report.sources?.length ?? 0 }));
    }
    return answer(404, () => error(res, 404, "not_found", `${req.method} ${req.url}`));
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => handle(req, res, Buffer.concat(chunks).toString("utf8")));
  });
  await new Promise<void>((resolve) => server.listen(0, opts.host ?? "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  Object.assign(stub, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
  return stub;
}

/** In process, the internal client's place: keeps each metrics forward it is handed and answers 200. */
export function recordingInternal() {
  const sent: MetricsForward[] = [];
  return {
    sent,
    call: async (_m: string, _p: string, body?: unknown) => {
      sent.push(body as MetricsForward);
      return { ok: true as const, status: 200, body: undefined };
    },
  };
}
