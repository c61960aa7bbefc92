// The least a Node proxy does, as gateway-throughput.ts' baseline: node:http server -> keep-alive client ->
// answer relayed. No cookie, no header hygiene, no pages.
//
//   node bench/src/gateway-bare-proxy.ts host:port [undici|http]
//
// `undici` (default) is the client the gateway uses (operator/src/gateway/forward.ts), so gateway/bare is
// the gateway's own cost; `http` is node:http's request() with a keep-alive Agent, the gateway's client
// before it, kept to show why it changed (about twice the CPU per request on the bench machine).
import { createServer, Agent as HttpAgent, type IncomingMessage, request, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent, type Dispatcher } from "undici";

const [host, port] = (process.argv[2] ?? "").split(":");
const client = process.argv[3] ?? "undici";
if (client !== "undici" && client !== "http") throw new Error("client: undici or http");

const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: 256 });
function viaHttp(req: IncomingMessage, res: ServerResponse): void {
  const up = request(
    { host, port: Number(port), method: req.method, path: req.url, headers: req.headers, agent: httpAgent },
    (pres) => {
      res.writeHead(pres.statusCode ?? 502, pres.headers);
      pres.pipe(res);
    },
  );
  up.on("error", () => res.destroy());
  req.pipe(up);
}

const agent = new Agent({ connections: 256, pipelining: 1, allowH2: false, headersTimeout: 0, bodyTimeout: 0 });
const origin = `http://${host}:${port}`;
const HOP = new Set(["connection", "keep-alive", "transfer-encoding"]);
function viaUndici(req: IncomingMessage, res: ServerResponse): void {
  const headers: string[] = [];
  let hasBody = false;
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] as string;
    const lower = name.toLowerCase();
    if (lower === "content-length" || lower === "transfer-encoding") hasBody = true;
    if (!HOP.has(lower)) headers.push(name, req.rawHeaders[i + 1] as string);
  }
  const handler: Dispatcher.DispatchHandler = {
    onRequestStart() {},
    onResponseStart(c, status) {
      const out: string[] = [];
      const raw = (c.rawHeaders ?? []) as Buffer[];
      for (let i = 0; i < raw.length; i += 2) {
        const name = (raw[i] as Buffer).toString("latin1");
        if (!HOP.has(name.toLowerCase())) out.push(name, (raw[i + 1] as Buffer).toString("latin1"));
      }
      res.writeHead(status, out);
    },
    onResponseData(_c, chunk) {
      res.write(chunk);
    },
    onResponseEnd() {
      res.end();
    },
    onResponseError() {
      res.destroy();
    },
  };
  const body = hasBody ? req : null;
  agent.dispatch({ origin, path: req.url ?? "/", method: (req.method ?? "GET") as "GET", headers, body }, handler);
}

const server = createServer(client === "http" ? viaHttp : viaUndici);
server.listen(0, "127.0.0.1", () =>
  console.log(`[bare-proxy] ${client} listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`),
);
process.on("SIGTERM", () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
