// The cluster's apiserver for the real node's pods (issue #33's first step). The bed's apiservers listen on
// loopback (e2e/src/testbed/cluster.ts), which no pod reaches. A relay on the node bridge's gateway
// address, at the apiserver's own port, passes connections through untouched (TLS end to end, so a pod
// checks the apiserver's certificate with its service account's CA), and the `kubernetes` Service's
// Endpoints and EndpointSlice name that address, as a cluster's endpoint reconciler names its apiservers
// (the bed's is off: `--endpoint-reconciler-type=none`). What is not there yet: the Service's ClusterIP
// (10.96.0.1) needs kube-proxy, so a pod reaches the apiserver at the Service's endpoint, not its IP.
import { ensureBridgeAddress, startTcpRelay } from "./bridge.ts";

interface Kube {
  raw(method: string, path: string, body?: unknown, contentType?: string): Promise<{ status: number; text: string }>;
}

export interface ApiserverForPods {
  /** Where the node's pods reach the apiserver: the `kubernetes` Service's endpoint. */
  address: string;
  port: number;
  stop(): Promise<void>;
}

export async function exposeApiserverToPods(o: {
  kube: Kube;
  /** The apiserver as the host reaches it (https://127.0.0.1:<port>). */
  server: string;
  node: { layout: { bridge: string }; podCidr: string };
}): Promise<ApiserverForPods> {
  const port = Number(new URL(o.server).port);
  const address = ensureBridgeAddress(o.node);
  const relay = await startTcpRelay(address, `127.0.0.1:${port}`, port);
  try {
    const ports = [{ name: "https", port, protocol: "TCP" }];
    const endpoints = {
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: { name: "kubernetes", namespace: "default" },
      subsets: [{ addresses: [{ ip: address }], ports }],
    };
    const slice = {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: {
        name: "kubernetes",
        namespace: "default",
        labels: { "kubernetes.io/service-name": "kubernetes", "endpointslice.kubernetes.io/managed-by": "berth-bed" },
      },
      addressType: "IPv4",
      endpoints: [{ addresses: [address], conditions: { ready: true } }],
      ports,
    };
    for (const [path, body] of [
      ["/api/v1/namespaces/default/endpoints", endpoints],
      ["/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", slice],
    ] as const) {
      const put = await o.kube.raw("PUT", `${path}/kubernetes`, body);
      const res = put.status === 404 ? await o.kube.raw("POST", path, body) : put;
      if (res.status >= 300) throw new Error(`the kubernetes Service's ${body.kind}: ${res.status} ${res.text}`);
    }
  } catch (err) {
    await relay.stop();
    throw err;
  }
  return { address, port, stop: () => relay.stop() };
}
