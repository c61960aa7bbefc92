// Free loopback ports. The kernel hands out an unused port for a socket bound to port 0; we close it and
// give the number to a component. Another process can take it in between, so callers retry a start that
// fails with "address already in use" on fresh ports (see isPortConflict).
import { readFileSync } from "node:fs";
import { createServer } from "node:net";

const handedOut = new Set<number>();

async function kernelPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** A port free on 127.0.0.1 now and not given out before by this process (clusters start in parallel). */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await kernelPort();
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}

export function isPortConflict(log: string): boolean {
  return /address already in use|bind: address/i.test(log);
}

async function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer().listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
    s.on("error", () => resolve(false));
  });
}

/**
 * `count` free ports in a row, below the kernel's ephemeral range, for a process that listens late or
 * again and again on the same port (npm start after its fleet is up; an API restarted after SIGKILL). A
 * port from the ephemeral range can be taken meanwhile by any outgoing connection (EADDRINUSE, seen in
 * CI); below it only another listener can take one.
 */
export async function quietPorts(count = 1): Promise<number> {
  const range = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/);
  const ephemeralFrom = Number(range[0]) || 32_768;
  for (;;) {
    const first = 10_000 + Math.floor(Math.random() * (ephemeralFrom - 10_000 - count));
    let free = true;
    for (let i = 0; i < count && free; i++) free = !handedOut.has(first + i) && (await isFree(first + i));
    if (free) {
      for (let i = 0; i < count; i++) handedOut.add(first + i);
      return first;
    }
  }
}
