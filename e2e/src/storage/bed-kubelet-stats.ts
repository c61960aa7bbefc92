// A storage node whose kubelet serves a stats summary, on a bed whose kwok kubelets serve none. The node
// is real in the cluster's apiserver (not managed by kwok), with its kubelet endpoint on a loopback HTTPS
// server of ours serving `/stats/summary` in the kubelet's shape: what the kubelet reads from the CSI
// driver (NodeGetVolumeStats) for each mounted claim, capacity, free and used bytes. Tests set those
// figures. The apiserver's node proxy refuses to dial a loopback node address ("address not allowed"),
// and the bed's nodes have only loopback ones, so `summary()` reads the endpoint directly, as the proxy
// would have.
import { readFileSync } from "node:fs";
import { createServer, request as httpsRequest, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { KubeHttp } from "../testbed/kube.ts";
import type { Cluster } from "../testbed/types.ts";

export interface ClaimStats {
  claim: string;
  namespace: string;
  capacityBytes: number;
  availableBytes: number;
  usedBytes: number;
}

export interface KubeletStats {
  readonly node: string;
  /** Requests this stand-in served: the reads through `summary()` (the apiserver cannot proxy here). */
  readonly requests: number;
  /** The summary as the node proxy would answer it (status and parsed JSON). */
  summary(): Promise<{ status: number; body?: unknown }>;
  /** Replaces the claims the summary reports (as mounted by one pod). */
  set(claims: ClaimStats[]): void;
  stop(): Promise<void>;
}

export async function startKubeletStats(c: Cluster, o: { node: string; claims?: ClaimStats[] }): Promise<KubeletStats> {
  let claims = o.claims ?? [];
  let requests = 0;
  const pki = join(c.dataDir, "pki");
  // Any pair for 127.0.0.1 serves: the apiserver dials kubelets without verifying (as for kwok).
  const server: Server = createServer(
    { cert: readFileSync(join(pki, "apiserver.crt")), key: readFileSync(join(pki, "apiserver.key")) },
    (req, res) => {
      requests++;
      if (req.method !== "GET" || req.url?.split("?")[0] !== "/stats/summary") {
        res.writeHead(404).end();
        return;
      }
      const time = new Date().toISOString();
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          node: { nodeName: o.node, startTime: time },
          pods: [
            {
              podRef: { name: "session-pod", namespace: claims[0]?.namespace ?? "default", uid: "0" },
              startTime: time,
              volume: claims.map((x) => ({
                time,
                name: "data",
                capacityBytes: x.capacityBytes,
                availableBytes: x.availableBytes,
                usedBytes: x.usedBytes,
                pvcRef: { name: x.claim, namespace: x.namespace },
              })),
            },
          ],
        }),
      );
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const k = new KubeHttp({ server: c.server, caPem: c.caPem, token: c.adminToken });
  try {
    await k.json("POST", "/api/v1/nodes", {
      apiVersion: "v1",
      kind: "Node",
      metadata: { name: o.node, labels: { "berth.dev/storage-node": "true" } },
      status: {
        addresses: [{ type: "InternalIP", address: "127.0.0.1" }],
        daemonEndpoints: { kubeletEndpoint: { Port: port } },
      },
    });
  } catch (e) {
    server.close();
    throw e;
  } finally {
    k.close();
  }
  return {
    node: o.node,
    get requests() {
      return requests;
    },
    summary: () =>
      new Promise((resolve, reject) => {
        const req = httpsRequest(
          { host: "127.0.0.1", port, path: "/stats/summary", method: "GET", ca: c.caPem },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (b: Buffer) => chunks.push(b));
            res.on("end", () => {
              const text = Buffer.concat(chunks).toString("utf8");
              resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined });
            });
          },
        );
        req.on("error", reject);
        req.end();
      }),
    set(next) {
      claims = next;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      const k2 = new KubeHttp({ server: c.server, caPem: c.caPem, token: c.adminToken });
      try {
        await k2.raw("DELETE", `/api/v1/nodes/${o.node}`).catch(() => {});
      } finally {
        k2.close();
      }
    },
  };
}
