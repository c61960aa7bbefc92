// biome-ignore-all lint/suspicious/noExplicitAny: the test reads the apiserver's JSON as it comes
// Services and DNS on the bed's real node (e2e/src/testbed/real-node/kube-proxy.ts and coredns.ts,
// docs/dev/real-node-network.md): a pod reaches another pod through a ClusterIP Service, and the apiserver
// through the `kubernetes` Service's ClusterIP, with real packets through kube-proxy's rules; it resolves
// both by name through CoreDNS. Real parts: the bed's apiserver and controller manager (EndpointSlices,
// service accounts), a real kubelet, containerd, kube-proxy and CoreDNS, Python and glibc in the pods.
// Stopping the node removes kube-proxy's chains from the host. Where canRunRealNode() says yes.
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SERVICE_CIDR } from "./cluster.ts";
import { type PodsOnTheRealNode, startPodsOnTheRealNode } from "./pods-on-the-real-node.test-support.ts";
import { dnsServiceIp } from "./real-node/coredns.ts";
import { canRunRealNode } from "./real-node/index.ts";
import { eventually } from "./waiting.test-support.ts";

const can = canRunRealNode();
const NODE = "services-real-1";
const NS = "default";

// Asks the echo Service by its ClusterIP, then the apiserver by the `kubernetes` Service's ClusterIP as an
// in-cluster client does (the service account's CA and token; who am I).
const CLIENT = `
import json, os, ssl, urllib.request
print(urllib.request.urlopen("http://" + os.environ["ECHO_IP"] + "/who", timeout=20).read().decode().strip())
sa = "/var/run/secrets/kubernetes.io/serviceaccount"
ctx = ssl.create_default_context(cafile=sa + "/ca.crt")
req = urllib.request.Request(
    "https://" + os.environ["KUBERNETES_SERVICE_HOST"] + "/apis/authentication.k8s.io/v1/selfsubjectreviews",
    data=json.dumps({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}).encode(),
    headers={"Authorization": "Bearer " + open(sa + "/token").read().strip(), "Content-Type": "application/json"},
)
print(json.load(urllib.request.urlopen(req, context=ctx, timeout=20))["status"]["userInfo"]["username"])
`;

// The pod's nameserver (the kubelet's clusterDNS), then names resolved by CoreDNS: the apiserver's Service
// in full, the echo Service in full and by its short name (the search path), and a page fetched by name.
const RESOLVER = `
import socket, urllib.request
print([l for l in open("/etc/resolv.conf").read().splitlines() if l.startswith("nameserver")][0])
print(socket.gethostbyname("kubernetes.default.svc.cluster.local"))
print(socket.gethostbyname("echo.default.svc.cluster.local"))
print(socket.gethostbyname("echo"))
print(urllib.request.urlopen("http://echo/who", timeout=20).read().decode().strip())
`;

/** The host's IPv4 NAT rules, where kube-proxy sends a ClusterIP to its endpoints. */
const natRules = () => execFileSync("iptables-save", ["-t", "nat"], { encoding: "utf8" });

/**
 * kube-proxy's chains on the host, IPv4 and IPv6. kube-router's (KUBE-ROUTER-, KUBE-NWPLCY-, KUBE-POD-FW-)
 * are another node's: the NetworkPolicy journey may run beside this one.
 */
function kubeChains(): string[] {
  return ["iptables-save", "ip6tables-save"].flatMap((cmd) =>
    execFileSync(cmd, { encoding: "utf8" })
      .split("\n")
      .filter((l) => l.startsWith(":KUBE-") && !/^:KUBE-(ROUTER|NWPLCY|POD-FW)-/.test(l)),
  );
}

describe.skipIf(!can.ok)(`Services and DNS on the real node${can.ok ? "" : ` (skipped: ${can.reason})`}`, () => {
  let bed: PodsOnTheRealNode;
  let clusterIp = "";

  /** Runs a Python program in a pod on the node to its end: its exit code and its log. */
  const runToEnd = (name: string, program: string, env: Record<string, string> = {}) =>
    bed.runToEnd(name, {
      name: "client",
      command: ["python3", "-c", program],
      env: Object.entries(env).map(([k, v]) => ({ name: k, value: v })),
    });

  beforeAll(async () => {
    bed = await startPodsOnTheRealNode({
      cluster: "svc",
      node: NODE,
      registry: "services-journey",
      options: { services: true },
    });
  }, 900_000);

  afterAll(async () => {
    await bed?.stop();
  }, 180_000);

  it("a pod reaches another pod through a ClusterIP Service, and the apiserver through the kubernetes Service", async () => {
    await bed.kube.json(
      "POST",
      `/api/v1/namespaces/${NS}/pods`,
      bed.pod(
        "echo",
        { app: "echo" },
        {
          name: "echo",
          command: [
            "sh",
            "-c",
            "mkdir -p /tmp/www && hostname > /tmp/www/who && exec python3 -m http.server -d /tmp/www 8080",
          ],
          readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
        },
      ),
    );
    const service = await bed.kube.json<any>("POST", `/api/v1/namespaces/${NS}/services`, {
      metadata: { name: "echo" },
      spec: { selector: { app: "echo" }, ports: [{ port: 80, targetPort: 8080, protocol: "TCP" }] },
    });
    clusterIp = service.spec.clusterIP;
    expect(clusterIp).toMatch(/^10\.96\.0\.\d+$/);
    const podIp = await eventually(
      async () => {
        const slices = await bed.kube.json<any>(
          "GET",
          `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Decho`,
        );
        const ready = slices.items.flatMap((s: any) => s.endpoints ?? []).find((e: any) => e.conditions?.ready);
        return ready?.addresses[0] as string | undefined;
      },
      { what: "the echo Service's endpoint ready", timeoutMs: 180_000 },
    );
    // kube-proxy writes its rules after it sees the slice; until then the ClusterIP refuses connections.
    await eventually(async () => (natRules().includes(`--to-destination ${podIp}:8080`) ? true : undefined), {
      what: "kube-proxy's rule to the echo pod",
      timeoutMs: 60_000,
    });

    const { exitCode, log } = await runToEnd("asks-by-service", CLIENT, { ECHO_IP: clusterIp });
    expect(exitCode, log).toBe(0);
    // The kubelet gives every container the kubernetes Service's ClusterIP as KUBERNETES_SERVICE_HOST.
    expect(log.trim().split("\n")).toEqual(["echo", "system:serviceaccount:default:default"]);
  }, 300_000);

  it("a pod resolves the apiserver's and a Service's names through the cluster's DNS, and connects by name", async () => {
    expect(clusterIp).not.toBe("");
    const { exitCode, log } = await runToEnd("asks-by-name", RESOLVER);
    expect(exitCode, log).toBe(0);
    expect(log.trim().split("\n")).toEqual([
      `nameserver ${dnsServiceIp(SERVICE_CIDR)}`,
      "10.96.0.1",
      clusterIp,
      clusterIp,
      "echo",
    ]);
  }, 300_000);

  it("stopping the node removes kube-proxy's chains from the host", async () => {
    expect(kubeChains().length).toBeGreaterThan(0);
    await bed.node.stop();
    expect(kubeChains()).toEqual([]);
  }, 180_000);
});
