// biome-ignore-all lint/suspicious/noExplicitAny: the test reads the apiserver's JSON as it comes
// NetworkPolicy on the bed's real node (e2e/src/testbed/real-node/kube-router.ts,
// docs/dev/real-node-network.md): Berth's sessions policy (controllers/src/mirror/manifests.ts) with real
// packets. A session pod reaches another before the policy; with it, a session pod cannot, while a gateway
// pod still can. Real parts: the bed's apiserver, a real kubelet, containerd, kube-router's firewall, Python
// in the pods. Stopping the node removes kube-router's chains. Where canRunRealNode() says yes.
import { execFileSync } from "node:child_process";
import { SESSIONS_POLICY_NAME, sessionsNetworkPolicyManifest } from "@berth/controllers";
import { GATEWAY_POD_LABELS, LABELS } from "@berth/crds";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PodsOnTheRealNode, startPodsOnTheRealNode } from "./pods-on-the-real-node.test-support.ts";
import { canRunRealNode } from "./real-node/index.ts";
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
  let bed: PodsOnTheRealNode;
  let target = "";

  /** Runs the client in a pod with these labels to its end (TRIES: tries): its exit code and its log. */
  const probe = (name: string, labels: Record<string, string>, tries = 1) =>
    bed.runToEnd(
      name,
      {
        name: "client",
        command: ["python3", "-c", CLIENT],
        env: [
          { name: "TARGET", value: target },
          { name: "TRIES", value: String(tries) },
        ],
      },
      labels,
    );

  beforeAll(async () => {
    bed = await startPodsOnTheRealNode({
      cluster: "np",
      node: NODE,
      registry: "netpol-journey",
      options: { networkPolicy: true },
    });
  }, 900_000);

  afterAll(async () => {
    await bed?.stop();
  }, 180_000);

  it("a session pod reaches another until the sessions policy applies; then only a gateway pod does", async () => {
    await bed.kube.json(
      "POST",
      `/api/v1/namespaces/${NS}/pods`,
      bed.pod("session-a", SESSION, {
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
        const p = await bed.kube.json<any>("GET", `/api/v1/namespaces/${NS}/pods/session-a`);
        return p.status.conditions?.some((c: any) => c.type === "Ready" && c.status === "True")
          ? (p.status.podIP as string)
          : undefined;
      },
      { what: "session-a ready", timeoutMs: 180_000 },
    );

    const before = await probe("session-b-before", SESSION);
    expect(before, before.log).toEqual({ exitCode: 0, log: "session-a\n" });

    await bed.kube.json(
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
    await bed.node.stop();
    expect(
      rules()
        .split("\n")
        .filter((l) => l.startsWith(":KUBE-ROUTER") || l.startsWith(":KUBE-NWPLCY")),
    ).toEqual([]);
  });
});
