// Free loopback ports. The kernel hands out an unused port for a socket bound to port 0; we close it and
// give the number to a component. Another process can take it in between, so callers retry a start that
// fails with "address already in use" on fresh ports (see isPortConflict).
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
