// OCI registries of the bed: go-containerregistry's `registry` (built by e2e/testbed/build-binaries.sh
// into its own version-keyed folder) as a local process on loopback, one for Berth's own registry and
// one standing in for a public registry. It keeps images in memory. `startTokenGate` puts a public
// registry's anonymous token flow in front of one (401 + WWW-Authenticate: Bearer, a realm that hands
// out tokens), with faults the tests switch on: a blob served with other bytes, a blob that stalls.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUILD_SCRIPT } from "./binaries.ts";
import { spawnManaged } from "./process.ts";

export interface LocalRegistry {
  /** http://127.0.0.1:<port> */
  url: string;
  /** 127.0.0.1:<port>, as image references name it. */
  host: string;
  stop(): Promise<void>;
}

/** The registry binary: BERTH_REGISTRY_BIN, else the build script's (cached) registry folder. */
export function findRegistryBinary(env: NodeJS.ProcessEnv = process.env): string {
  if (env.BERTH_REGISTRY_BIN && existsSync(env.BERTH_REGISTRY_BIN)) return env.BERTH_REGISTRY_BIN;
  const out = execFileSync("bash", [BUILD_SCRIPT, "--registry"], { stdio: ["ignore", "pipe", "inherit"], env })
    .toString()
    .trim();
  const bin = join(out.split("\n").at(-1) ?? "", "registry");
  if (!existsSync(bin)) throw new Error(`${BUILD_SCRIPT} --registry built no ${bin}`);
  return bin;
}

export async function startRegistry(
  opts: {
    name?: string;
    dir?: string;
    bin?: string;
    /** A fixed port (an install's manifests name the registry); default one the system picks. */
    port?: number;
  } = {},
): Promise<LocalRegistry> {
  const temporary = opts.dir === undefined;
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), "berth-registry-"));
  mkdirSync(dir, { recursive: true });
  const logFile = join(dir, `${opts.name ?? "registry"}.log`);
  // -port 0: the system picks a free port, which the registry prints (no race with another test).
  const proc = spawnManaged({
    name: opts.name ?? "registry",
    command: opts.bin ?? findRegistryBinary(),
    args: ["-port", String(opts.port ?? 0)],
    logFile,
  });
  const deadline = Date.now() + 20_000;
  let port: number | undefined;
  while (port === undefined) {
    const m = existsSync(logFile) ? /serving on port (\d+)/.exec(readFileSync(logFile, "utf8")) : null;
    if (m) port = Number(m[1]);
    else if (proc.hasExited() || Date.now() > deadline) {
      const tail = proc.tail(10);
      await proc.stop();
      throw new Error(`the registry did not start: ${tail}`);
    } else await new Promise((r) => setTimeout(r, 50));
  }
  const host = `127.0.0.1:${port}`;
  return {
    url: `http://${host}`,
    host,
    stop: async () => {
      await proc.stop(2000);
      if (temporary) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface TokenGate {
  url: string;
  host: string;
  /** Tokens handed out so far (the flow really ran). */
  readonly tokensIssued: number;
  /** Blobs (by digest) served with other bytes of the same length. */
  corrupt: Set<string>;
  /** Blobs (by digest) that send half their bytes and then go silent. */
  stall: Set<string>;
  /** Repositories that answer 401 even with a token (private). */
  privateRepositories: Set<string>;
  /** Blob GETs that reached the upstream, by digest. */
  readonly blobGets: Map<string, number>;
  stop(): Promise<void>;
}

/** A public registry's anonymous token flow (and faults) in front of `upstream` (http://host:port). */
export async function startTokenGate(upstream: string): Promise<TokenGate> {
  const tokens = new Set<string>();
  const sockets = new Set<import("node:net").Socket>();
  const gate = {
    tokensIssued: 0,
    corrupt: new Set<string>(),
    stall: new Set<string>(),
    privateRepositories: new Set<string>(),
    blobGets: new Map<string, number>(),
  };
  let self = "";
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname === "/token") {
      const token = randomBytes(12).toString("hex");
      tokens.add(token);
      gate.tokensIssued++;
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ token, expires_in: 300 }));
      return;
    }
    const auth = req.headers.authorization ?? "";
    const repo = /^\/v2\/(.+?)\/(manifests|blobs|tags)\//.exec(url.pathname)?.[1];
    if (!tokens.has(auth.replace(/^Bearer /, "")) || (repo && gate.privateRepositories.has(repo))) {
      res.writeHead(401, {
        "WWW-Authenticate": `Bearer realm="${self}/token",service="bed-registry"${repo ? `,scope="repository:${repo}:pull"` : ""}`,
        "Content-Type": "application/json",
      });
      res.end(JSON.stringify({ errors: [{ code: "UNAUTHORIZED", message: "authentication required" }] }));
      return;
    }
    const blob = /\/blobs\/(sha256:[a-f0-9]{64})$/.exec(url.pathname)?.[1];
    if (blob && req.method === "GET") gate.blobGets.set(blob, (gate.blobGets.get(blob) ?? 0) + 1);
    const headers = { ...req.headers };
    delete headers.authorization;
    delete headers.host;
    fetch(`${upstream}${url.pathname}${url.search}`, {
      method: req.method ?? "GET",
      headers: headers as Record<string, string>,
    })
      .then(async (up) => {
        const out: Record<string, string> = {};
        up.headers.forEach((v, k) => {
          if (k !== "content-encoding" && k !== "transfer-encoding" && k !== "connection") out[k] = v;
        });
        res.writeHead(up.status, out);
        if (!up.body || req.method === "HEAD") return res.end();
        const body = Buffer.from(await up.arrayBuffer());
        if (blob && gate.corrupt.has(blob)) {
          const bad = Buffer.from(body);
          bad[bad.length - 1] = (bad[bad.length - 1] ?? 0) ^ 0xff;
          return res.end(bad);
        }
        if (blob && gate.stall.has(blob)) {
          res.write(body.subarray(0, Math.floor(body.length / 2)));
          return; // and nothing more: the connection stays open and silent
        }
        res.end(body);
      })
      .catch(() => {
        res.writeHead(502);
        res.end();
      });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  self = `http://${host}`;
  return Object.assign(gate, {
    url: self,
    host,
    stop: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  }) as TokenGate;
}
