// The least a Node proxy does, as gateway-throughput.ts' baseline: node:http server -> keep-alive
// node:http client -> pipe. No cookie, no header hygiene, no pages. `node bench/src/gateway-bare-proxy.ts host:port`
import { Agent, createServer, request } from "node:http";
import type { AddressInfo } from "node:net";

const [host, port] = (process.argv[2] ?? "").split(":");
const agent = new Agent({ keepAlive: true, maxSockets: 256 });
const server = createServer((req, res) => {
  const up = request(
    { host, port: Number(port), method: req.method, path: req.url, headers: req.headers, agent },
    (pres) => {
      res.writeHead(pres.statusCode ?? 502, pres.headers);
      pres.pipe(res);
    },
  );
  up.on("error", () => res.destroy());
  req.pipe(up);
});
server.listen(0, "127.0.0.1", () =>
  console.log(`[bare-proxy] listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`),
);
process.on("SIGTERM", () => server.close(() => process.exit(0)));
