// A stand-in for a session's applications (JupyterLab, web terminal, code editor), for tests, benchmarks
// and `npm start` on the local fleet, where pod IPs are data and nothing real runs in a pod.
//
// It answers under any prefix, as the real applications do when configured with the gateway's base path
// (/proxy/{cr}/): /proxy/{cr}/lab and /lab are the same page.
//   GET  …/lab, …/terminal, …/code/   an HTML page naming the application (and a WebSocket round trip)
//   GET  …/api/echo                   JSON: method, path, the cr from the prefix, and the headers received
//   GET  …/hello                      "hello" (the benchmark's small response)
//   WS   …/ws/echo                    echoes every message
//   GET  …/api/status, …/api/kernels, …/api/terminals   Jupyter Server's shapes (docs/dev/idle-and-limits.md):
//        what `setNotebook(cr, …)` set for the session, else one idle kernel started when the stand-in did
//   WS   …/api/kernels/{id}/channels  a kernel channel: echoes, and marks the kernel's last activity
//   GET  /healthz                     ok
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { WebSocketServer } from "ws";

/** What the stand-in prints at start: the bed's kwok serves the same lines as every pod's log. */
export const STANDIN_LOG_LINES = [
  "[standin] Jupyter Server stand-in is running",
  "[standin] serving /lab, /terminal and /code/",
  "[standin] websocket echo at /ws/echo",
];

export interface StandinOptions {
  host?: string;
  port?: number;
  /** Shown on its pages, e.g. the cluster it stands in for. */
  name?: string;
  /** Receives STANDIN_LOG_LINES at start. */
  log?: (line: string) => void;
}

/** One kernel or terminal as Jupyter Server lists it. */
export interface StandinKernel {
  id: string;
  name?: string;
  execution_state: "idle" | "busy" | "starting";
  last_activity: string;
  connections?: number;
}
export interface StandinTerminal {
  name: string;
  last_activity: string;
}
export interface StandinNotebook {
  kernels: StandinKernel[];
  terminals: StandinTerminal[];
}

export interface RunningStandin {
  url: string;
  host: string;
  port: number;
  /** What …/api/kernels and …/api/terminals answer for session `cr` (tests drive kernels this way). */
  setNotebook(cr: string, nb: StandinNotebook): void;
  /** Make the notebook API of `cr` answer 503 (a server that is not up), or serve again (false). */
  failNotebook(cr: string, failing: boolean): void;
  close(): Promise<void>;
}

const APPS: Record<string, { title: string; app: string }> = {
  lab: { title: "JupyterLab", app: "lab" },
  terminal: { title: "Terminal", app: "terminal" },
  code: { title: "Code editor", app: "code" },
};

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Splits /proxy/{cr}/rest into cr and rest; a path without the prefix has no cr. */
export function splitPrefix(path: string): { cr?: string; rest: string } {
  const m = /^\/proxy\/([^/]+)(\/.*)?$/.exec(path);
  return m ? { cr: m[1] as string, rest: m[2] ?? "/" } : { rest: path };
}

function page(title: string, app: string, name: string, cr: string | undefined): string {
  // The script checks the WebSocket through whatever fronts it (the gateway), relative to this page.
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)} (stand-in)</title></head>
<body><main data-testid="standin-app" data-app="${esc(app)}" data-cr="${esc(cr ?? "")}">
<h1>${esc(title)}</h1><p>Stand-in application${name ? ` for ${esc(name)}` : ""}${cr ? `, session ${esc(cr)}` : ""}.</p>
<p>WebSocket: <output data-testid="standin-ws">connecting…</output></p></main>
<script>
(() => {
  const out = document.querySelector('[data-testid="standin-ws"]');
  const base = location.pathname.replace(/\\/(lab|terminal|code)(\\/.*)?$/, "/");
  const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + base + "ws/echo");
  ws.onopen = () => ws.send("ping");
  ws.onmessage = (e) => { out.textContent = "echo: " + e.data; ws.close(); };
  ws.onerror = () => { out.textContent = "error"; };
})();
</script></body></html>
`;
}

export async function startStandin(o: StandinOptions = {}): Promise<RunningStandin> {
  const name = o.name ?? "";
  const started = new Date().toISOString();
  const notebooks = new Map<string, StandinNotebook>();
  const failing = new Set<string>();
  const notebookOf = (cr: string): StandinNotebook => {
    let nb = notebooks.get(cr);
    if (!nb) {
      nb = {
        kernels: [
          { id: "k-standin", name: "python3", execution_state: "idle", last_activity: started, connections: 0 },
        ],
        terminals: [],
      };
      notebooks.set(cr, nb);
    }
    return nb;
  };
  const json = (res: ServerResponse, status: number, body: unknown) =>
    void res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  const sockets = new Set<Socket>();
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  wss.on("connection", (ws) => {
    ws.on("message", (data, isBinary) => ws.send(data, { binary: isBinary }));
  });

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://standin");
    const { cr, rest } = splitPrefix(url.pathname);
    if (url.pathname === "/healthz") return void res.writeHead(200, { "content-type": "text/plain" }).end("ok");
    if (rest === "/hello")
      return void res.writeHead(200, { "content-type": "text/plain", "content-length": 5 }).end("hello");
    if (rest === "/api/echo") {
      const body = JSON.stringify({
        method: req.method,
        path: url.pathname,
        query: url.search,
        cr: cr ?? null,
        headers: req.headers,
      });
      return void res
        .writeHead(200, { "content-type": "application/json", "set-cookie": "_xsrf=standin; Path=/" })
        .end(body);
    }
    if (rest === "/api/status" || rest === "/api/kernels" || rest === "/api/terminals") {
      const key = cr ?? "";
      if (failing.has(key)) return json(res, 503, { message: "the notebook server is not up" });
      const nb = notebookOf(key);
      if (rest === "/api/kernels") return json(res, 200, nb.kernels);
      if (rest === "/api/terminals") return json(res, 200, nb.terminals);
      const times = [...nb.kernels, ...nb.terminals].map((x) => x.last_activity).sort();
      return json(res, 200, {
        connections: nb.kernels.reduce((n, k) => n + (k.connections ?? 0), 0),
        kernels: nb.kernels.length,
        last_activity: times.at(-1) ?? started,
        started,
      });
    }
    const m = /^\/(lab|terminal|code)(\/.*)?$/.exec(rest);
    const app = m ? APPS[m[1] as string] : undefined;
    if (app && req.method === "GET") {
      if (app.app === "code" && m?.[2] === undefined) {
        // The editor lives at code/ (relative assets), as code-server does.
        return void res.writeHead(308, { location: `${url.pathname}/${url.search}` }).end();
      }
      const html = page(app.title, app.app, name, cr);
      return void res
        .writeHead(200, { "content-type": "text/html; charset=utf-8", "content-length": Buffer.byteLength(html) })
        .end(html);
    }
    res.writeHead(404, { "content-type": "text/plain" }).end("stand-in: not found\n");
  });
  server.on("upgrade", (req, socket, head) => {
    const { cr, rest } = splitPrefix(new URL(req.url ?? "/", "http://standin").pathname);
    const kernel = /^\/api\/kernels\/([^/]+)\/channels$/.exec(rest);
    if (kernel) {
      // A kernel channel: what the browser sends is echoed, and the kernel was active just now.
      return void wss.handleUpgrade(req, socket, head, (ws) => {
        ws.on("message", (data, isBinary) => {
          const k = notebookOf(cr ?? "").kernels.find((x) => x.id === kernel[1]);
          if (k) k.last_activity = new Date().toISOString();
          ws.send(data, { binary: isBinary });
        });
      });
    }
    if (rest !== "/ws/echo")
      return void socket.end("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit("connection", ws, req));
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  server.listen(o.port ?? 0, o.host ?? "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  const host = o.host ?? "127.0.0.1";
  for (const line of STANDIN_LOG_LINES) o.log?.(line);
  return {
    url: `http://${host}:${port}`,
    host,
    port,
    setNotebook(cr, nb) {
      notebooks.set(cr, structuredClone(nb));
    },
    failNotebook(cr, f) {
      if (f) failing.add(cr);
      else failing.delete(cr);
    },
    async close() {
      for (const c of wss.clients) c.terminate();
      const closed = new Promise<void>((r) => server.close(() => r()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
