// The code editor a Berth session runs (cdk8s/src/image/sessions.ts): code-server serves from "/" (it has
// no base path setting) while the gateway forwards /proxy/{cr}/… unchanged, so this front listens on
// BERTH_PORT, takes BERTH_BASE_PATH off each request (HTTP and WebSocket) and passes it to code-server on a
// Unix socket. code-server runs with --auth none: the gateway authenticates. It stops when code-server does.
import { spawn } from "node:child_process";
import http from "node:http";
import net from "node:net";

const base = (process.env.BERTH_BASE_PATH || `${process.env.NB_PREFIX ?? ""}/`).replace(/\/?$/, "/");
const port = Number(process.env.BERTH_PORT || 8080);
const sock = `/tmp/code-server-${process.pid}.sock`;
const child = spawn(
  process.execPath,
  [
    "/usr/local/lib/node_modules/code-server/out/node/entry.js",
    "--socket",
    sock,
    "--auth",
    "none",
    "--disable-telemetry",
    "--disable-update-check",
    "--disable-workspace-trust",
    process.env.HOME || "/home/jovyan",
  ],
  { stdio: "inherit" },
);
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
for (const s of ["SIGTERM", "SIGINT"]) process.on(s, () => child.kill(s));

// The connect link's path is {base}code/ (the contract's /proxy/{cr}/code/); {base} itself serves the same.
const link = `${base}code/`;
/** The prefix a request came under ({base}code/ or {base}), or null for a path outside both. */
const prefixOf = (url = "/") => (url.startsWith(link) ? link : url.startsWith(base) ? base : null);
/** The path code-server sees. */
const strip = (url = "/") => {
  const prefix = prefixOf(url);
  return prefix === null ? null : url.slice(prefix.length - 1);
};

const server = http.createServer((req, res) => {
  if (req.url === base.slice(0, -1) || req.url === link.slice(0, -1))
    return void res.writeHead(308, { location: `${req.url}/` }).end();
  const prefix = prefixOf(req.url);
  const path = strip(req.url);
  if (prefix === null || path === null)
    return void res.writeHead(404, { "content-type": "text/plain" }).end(`not under ${base}\n`);
  const up = http.request({ socketPath: sock, path, method: req.method, headers: req.headers }, (r) => {
    const headers = [];
    for (let i = 0; i < r.rawHeaders.length; i += 2) {
      const [k, v] = [r.rawHeaders[i], r.rawHeaders[i + 1]];
      // An absolute redirect of code-server's is under the base path from outside.
      headers.push(k, k.toLowerCase() === "location" && v.startsWith("/") ? prefix + v.slice(1) : v);
    }
    res.writeHead(r.statusCode ?? 502, headers);
    r.pipe(res);
  });
  up.on("error", () => {
    if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
    res.end("code-server is not answering\n");
  });
  req.pipe(up);
});

server.on("upgrade", (req, socket, head) => {
  const path = strip(req.url);
  if (path === null) return void socket.destroy();
  const up = net.connect(sock, () => {
    const lines = [`${req.method} ${path} HTTP/1.1`];
    for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
    up.write(`${lines.join("\r\n")}\r\n\r\n`);
    if (head.length) up.write(head);
    socket.pipe(up).pipe(socket);
  });
  up.on("error", () => socket.destroy());
  socket.on("error", () => up.destroy());
});

// Listen only once code-server answers on its socket: the pod's readiness is a connection to this port
// (controllers/src/mirror/manifests.ts), so a port open before code-server is up would send people a 502.
const answering = () =>
  new Promise((resolve) => {
    const c = net.connect(sock, () => {
      c.destroy();
      resolve(true);
    });
    c.on("error", () => resolve(false));
  });
while (!(await answering())) await new Promise((r) => setTimeout(r, 100));
server.listen(port, "0.0.0.0", () => console.log(`code editor: port ${port} under ${base}`));
