// biome-ignore-all lint/suspicious/noExplicitAny: the test reads the apiserver's JSON as it comes
// NetworkPolicy on the bed's real node (e2e/src/testbed/real-node/kube-router.ts,
// docs/dev/real-node-network.md): Berth's sessions policy (controllers/src/mirror/manifests.ts) with real
// packets. A session pod reaches another before the policy; with it, a session pod cannot, while a gateway
// pod still can. Real parts: the bed's apiserver, a real kubelet, containerd, kube-router's firewall, Python
// in the pods. Stopping the node removes kube-router's chains. Where canRunRealNode() says yes.
import { execFileSync } from "node:child_process";
import { buildSessionImage, pushSessionImage } from "@berth/cdk8s/image/sessions";
import { SESSIONS_POLICY_NAME, sessionsNetworkPolicyManifest } from "@berth/controllers";
import { GATEWAY_POD_LABELS, LABELS } from "@berth/crds";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFleet } from "./fleet.ts";
import { KubeHttp } from "./kube.ts";
import { canRunRealNode, REAL_NODE_TAINT, type RealNode, startRealNode } from "./real-node/index.ts";
import { type LocalRegistry, startRegistry } from "./registry.ts";
import type { Fleet } from "./types.ts";
import { eventually } from "./waiting.test-support.ts";

const can = canRunRealNode();
const NODE = "netpol-real-1";
const NS = "default";
const SESSION = { [LABELS.name]: "berth-session" };

// Fetches the target's page; exit 3 when it cannot (refused, or dropped until the timeout). With TRIES,
// asks that many times a second apart until answered: kube-router admits a new pod once it has seen its
// address, a moment after the pod starts.
const CLIENT = `
import os, sys, time, urllib.request
for i in range(int(os.environ.get("TRIES", "1"))):
    try:
        print(urllib.request.urlopen("http://" + os.environ["TARGET"] + ":8080/who", timeout=10).read().decode().strip())
        sys.exit(0)
    except Exception as e:
        err = e
        time.sleep(1)
print("unreachable:", err)
sys.exit(3)
`;

/** The host's iptables rules, IPv4. */
const rules = () => execFileSync("iptables-save", { encoding: "utf8" });

describe.skipIf(!can.ok)(`NetworkPolicy on the real node${can.ok ? "" : ` (skipped: ${can.reason})`}`, () => {
  let fleet: Fleet;
  let registry: LocalRegistry;
  let node: RealNode;
  let kube: KubeHttp;
  let image = "";
  let target = "";

  const pod = (name: string, labels: Record<string, string>, container: Record<string, unknown>) => ({
    metadata: { name, labels },
    spec: {
      nodeName: NODE,
      tolerations: [{ ...REAL_NODE_TAINT, operator: "Equal" }],
      restartPolicy: "Never",
      terminationGracePeriodSeconds: 1,
      containers: [{ image, ...container }],
    },
  });

  /** Runs the client in a pod with these labels to its end (TRIES: tries): its exit code and its log. */
  const probe = async (name: string, labels: Record<string, string>, tries = 1) => {
    await kube.json(
      "POST",
      `/api/v1/namespaces/${NS}/pods`,
      pod(name, labels, {
        name: "client",
        command: ["python3", "-c", CLIENT],
        env: [
          { name: "TARGET", value: target },
          { name: "TRIES", value: String(tries) },
        ],
      }),
    );
    const done = await eventually(
      async () => {
        const p = await kube.json<any>("GET", `/api/v1/namespaces/${NS}/pods/${name}`);
        return p.status.containerStatuses?.[0]?.state?.terminated;
      },
      { what: `pod ${name} finished`, timeoutMs: 180_000 },
    );
    const log = (await kube.raw("GET", `/api/v1/namespaces/${NS}/pods/${name}/log`)).text;
    return { exitCode: done.exitCode as number, log };
  };

  beforeAll(async () => {
    [fleet, registry] = await Promise.all([
      startFleet({ clusters: [{ name: "np", kind: "gpu", nodes: [] }] }),
      startRegistry({ name: "netpol-journey" }),
    ]);
    node = await startRealNode({
      cluster: fleet.cluster("np"),
      name: NODE,
      gpuModel: "NVIDIA-L4",
      gpuCount: 1,
      registries: [registry.host],
      networkPolicy: true,
    });
    image = (await pushSessionImage(buildSessionImage("terminal", { quiet: true }), registry.host)).ref;
    const c = fleet.cluster("np");
    kube = new KubeHttp({ server: c.server, caPem: c.caPem, token: c.adminToken });
  }, 900_000);

  afterAll(async () => {
    kube?.close();
    await node?.stop();
    await Promise.all([registry?.stop(), fleet?.stop()]);
  }, 180_000);

  it("a session pod reaches another until the sessions policy applies; then only a gateway pod does", async () => {
    await kube.json(
      "POST",
      `/api/v1/namespaces/${NS}/pods`,
      pod("session-a", SESSION, {
        name: "notebook",
        command: [
          "sh",
          "-c",
          "mkdir -p /tmp/www && hostname > /tmp/www/who && exec python3 -m http.server -d /tmp/www 8080",
        ],
        ports: [{ name: "http", containerPort: 8080 }],
        readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
      }),
    );
    target = await eventually(
      async () => {
        const p = await kube.json<any>("GET", `/api/v1/namespaces/${NS}/pods/session-a`);
        return p.status.conditions?.some((c: any) => c.type === "Ready" && c.status === "True")
          ? (p.status.podIP as string)
          : undefined;
      },
      { what: "session-a ready", timeoutMs: 180_000 },
    );

    const before = await probe("session-b-before", SESSION);
    expect(before, before.log).toEqual({ exitCode: 0, log: "session-a\n" });

    await kube.json(
      "POST",
      `/apis/networking.k8s.io/v1/namespaces/${NS}/networkpolicies`,
      sessionsNetworkPolicyManifest({ namespace: NS, gatewayNamespace: NS, operatorNamespace: NS }),
    );
    // kube-router names the policy in the comments of the rules it writes for it.
    await eventually(async () => (rules().includes(SESSIONS_POLICY_NAME) ? true : undefined), {
      what: "kube-router's rules for the sessions policy",
      timeoutMs: 60_000,
    });

    const after = await probe("session-b-after", SESSION);
    expect(after.exitCode, after.log).toBe(3);
    const gateway = await probe("gateway", { ...GATEWAY_POD_LABELS }, 60);
    expect(gateway, gateway.log).toEqual({ exitCode: 0, log: "session-a\n" });
  });

  it("stopping the node removes kube-router's chains from the host", async () => {
    await node.stop();
    expect(
      rules()
        .split("\n")
        .filter((l) => l.startsWith(":KUBE-ROUTER") || l.startsWith(":KUBE-NWPLCY")),
    ).toEqual([]);
  });
});
