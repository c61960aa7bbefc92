// The cluster's DNS on a real node (docs/dev/real-node-network.md): CoreDNS from the node's build, a host
// process serving the cluster's names from its apiserver on the node bridge's gateway address, and the
// `kube-dns` Service at the address the kubelet gives every pod as its nameserver (clusterDNS). The Service
// has no selector; its EndpointSlice names the gateway, as the `kubernetes` Service's does (apiserver.ts),
// and kube-proxy sends the pods' queries there. A process rather than a pod: the pod would need an image
// of the binary and a way to the loopback apiserver, both already solved here for the host.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ManagedProcess, spawnManaged } from "../process.ts";
import { bridgeGateway } from "./bridge.ts";
import type { NodeLayout } from "./layout.ts";

export const CLUSTER_DOMAIN = "cluster.local";

interface Kube {
  raw(method: string, path: string, body?: unknown, contentType?: string): Promise<{ status: number; text: string }>;
}

/** The DNS Service's ClusterIP: the tenth address of the Service range, as kubeadm picks it. */
export function dnsServiceIp(serviceCidr: string): string {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/\d+$/.exec(serviceCidr);
  if (!m) throw new Error(`${serviceCidr} is not an IPv4 CIDR`);
  return `${m[1]}.${m[2]}.${m[3]}.${Number(m[4]) + 10}`;
}

// The node's CoreDNS links only these directives (e2e/testbed/corednsbin/main.go); another one needs adding there.
export function corefile(o: { address: string; kubeconfig: string; readyPort: number }): string {
  return `.:53 {
    bind ${o.address}
    errors
    ready 127.0.0.1:${o.readyPort}
    kubernetes ${CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {
        kubeconfig ${o.kubeconfig}
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    forward . /etc/resolv.conf
    cache 5
}
`;
}

/** Starts CoreDNS and points `kube-system/kube-dns` at it; resolves once it has read the cluster. */
export async function startClusterDns(o: {
  layout: NodeLayout;
  binDir: string;
  kube: Kube;
  kubeconfig: string;
  podCidr: string;
  serviceIp: string;
  readyPort: number;
  timeoutMs: number;
}): Promise<ManagedProcess> {
  const l = o.layout;
  const address = bridgeGateway(o.podCidr).address;
  const conf = join(l.base, "Corefile");
  writeFileSync(conf, corefile({ address, kubeconfig: o.kubeconfig, readyPort: o.readyPort }));
  const proc = spawnManaged({
    name: `${l.name}/coredns`,
    command: join(o.binDir, "coredns"),
    args: ["-conf", conf],
    logFile: join(l.logs, "coredns.log"),
  });
  try {
    const deadline = performance.now() + o.timeoutMs;
    for (;;) {
      if (proc.hasExited()) throw new Error(`real node ${l.name}: CoreDNS exited:\n${proc.tail(20)}`);
      const res = await fetch(`http://127.0.0.1:${o.readyPort}/ready`).catch(() => undefined);
      await res?.body?.cancel();
      if (res?.ok) break;
      if (performance.now() > deadline)
        throw new Error(`real node ${l.name}: CoreDNS not ready after ${o.timeoutMs / 1000}s:\n${proc.tail(20)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const ports = [
      { name: "dns", port: 53, protocol: "UDP" },
      { name: "dns-tcp", port: 53, protocol: "TCP" },
    ];
    const service = {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "kube-dns", namespace: "kube-system", labels: { "k8s-app": "kube-dns" } },
      spec: { clusterIP: o.serviceIp, ports: ports.map((p) => ({ ...p, targetPort: 53 })) },
    };
    const slice = {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: {
        name: "kube-dns",
        namespace: "kube-system",
        labels: { "kubernetes.io/service-name": "kube-dns", "endpointslice.kubernetes.io/managed-by": "berth-bed" },
      },
      addressType: "IPv4",
      endpoints: [{ addresses: [address], conditions: { ready: true } }],
      ports,
    };
    for (const [path, body] of [
      ["/api/v1/namespaces/kube-system/services", service],
      ["/apis/discovery.k8s.io/v1/namespaces/kube-system/endpointslices", slice],
    ] as const) {
      const res = await o.kube.raw("POST", path, body);
      // A Service of a stopped node's run stays in the cluster; its ClusterIP is the fixed one.
      if (res.status === 409) {
        const old = await o.kube.raw("GET", `${path}/kube-dns`);
        const version = (JSON.parse(old.text) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
        const put = await o.kube.raw("PUT", `${path}/kube-dns`, {
          ...body,
          metadata: { ...body.metadata, resourceVersion: version },
        });
        if (put.status >= 300) throw new Error(`the kube-dns ${body.kind}: ${put.status} ${put.text}`);
      } else if (res.status >= 300) throw new Error(`the kube-dns ${body.kind}: ${res.status} ${res.text}`);
    }
    return proc;
  } catch (err) {
    await proc.stop(2000);
    throw err;
  }
}
