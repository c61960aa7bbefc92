// The host's side of a real node's pod network: the bridge's gateway address, which the node's pods route
// to and the host answers on, and TCP relays listening there for services the bed runs on loopback (a pod's
// network namespace cannot reach the host's 127.0.0.1): Berth's registry (e2e/src/builds/real-builds.ts) and
// the cluster's apiserver (apiserver.ts).
import { execFileSync } from "node:child_process";
import { createServer, connect as netConnect, type Server, type Socket } from "node:net";

/** The pods' gateway on the node's bridge: the subnet's first address (`10.234.0.0/24` → `10.234.0.1`). */
export function bridgeGateway(podCidr: string): { address: string; prefix: number } {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(podCidr);
  if (!m) throw new Error(`${podCidr} is not an IPv4 CIDR`);
  return { address: `${m[1]}.${m[2]}.${m[3]}.${Number(m[4]) + 1}`, prefix: Number(m[5]) };
}

/**
 * Makes the node's bridge with its gateway address if the first pod has not yet (the CNI bridge plugin
 * takes it as it is; the node's teardown removes it); answers the address.
 */
export function ensureBridgeAddress(node: { layout: { bridge: string }; podCidr: string }): string {
  const { address, prefix } = bridgeGateway(node.podCidr);
  const bridge = node.layout.bridge;
  const ip = (...args: string[]) => execFileSync("ip", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  let shown = "";
  try {
    shown = ip("-o", "addr", "show", "dev", bridge);
  } catch {
    ip("link", "add", "name", bridge, "type", "bridge");
  }
  if (!shown.includes(` ${address}/`)) ip("addr", "add", `${address}/${prefix}`, "dev", bridge);
  ip("link", "set", bridge, "up");
  return address;
}

export interface TcpRelay {
  /** `<address>:<port>`. */
  host: string;
  port: number;
  stop(): Promise<void>;
}

/** Listens on `address` (`port`, default a free one) and passes every connection on to `target` (`host:port`). */
export async function startTcpRelay(address: string, target: string, port = 0): Promise<TcpRelay> {
  const [toHost, toPort] = [
    target.slice(0, target.lastIndexOf(":")),
    Number(target.slice(target.lastIndexOf(":") + 1)),
  ];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = netConnect(toPort, toHost);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, address, () => resolve());
  });
  const bound = (server.address() as { port: number }).port;
  return {
    host: `${address}:${bound}`,
    port: bound,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
