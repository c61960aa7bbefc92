// biome-ignore-all lint/suspicious/noExplicitAny: the test reads the apiserver's JSON as it comes
// A pod on the bed's real node reaches its cluster's apiserver (e2e/src/testbed/real-node/apiserver.ts): the
// `kubernetes` Service's EndpointSlice names an address on the node's bridge, and a pod there connects to it,
// checks the apiserver's certificate with its service account's CA under the Service's name, and is
// answered as its service account. Real parts: the bed's apiserver and controller manager (the account, its
// token, the CA), a real kubelet and containerd, Python's TLS in the pod. Where canRunRealNode() says yes.
import { buildSessionImage, pushSessionImage } from "@berth/cdk8s/image/sessions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFleet } from "./fleet.ts";
import { KubeHttp } from "./kube.ts";
import { canRunRealNode, REAL_NODE_TAINT, type RealNode, startRealNode } from "./real-node/index.ts";
import { type LocalRegistry, startRegistry } from "./registry.ts";
import type { Fleet } from "./types.ts";
import { eventually } from "./waiting.test-support.ts";

const can = canRunRealNode();
const NODE = "apiserver-real-1";

// What an in-cluster client does, with the address the Service's endpoint gives: TLS checked against the
// service account's CA for the Service's DNS name, the account's token, a SelfSubjectReview (who am I).
const CLIENT = `
import json, os, socket, ssl
sa = "/var/run/secrets/kubernetes.io/serviceaccount"
ctx = ssl.create_default_context(cafile=sa + "/ca.crt")
token = open(sa + "/token").read().strip()
body = json.dumps({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}).encode()
raw = socket.create_connection((os.environ["API_ADDRESS"], int(os.environ["API_PORT"])), timeout=20)
s = ctx.wrap_socket(raw, server_hostname="kubernetes.default.svc")
s.sendall((
    "POST /apis/authentication.k8s.io/v1/selfsubjectreviews HTTP/1.1\\r\\nHost: kubernetes.default.svc\\r\\n"
    "Authorization: Bearer " + token + "\\r\\nContent-Type: application/json\\r\\n"
    "Content-Length: " + str(len(body)) + "\\r\\nConnection: close\\r\\n\\r\\n"
).encode() + body)
data = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
head, _, rest = data.partition(b"\\r\\n\\r\\n")
print(head.split(b"\\r\\n")[0].decode())
if b"chunked" in head.lower():
    out = b""
    while rest:
        size, _, rest = rest.partition(b"\\r\\n")
        n = int(size, 16)
        if n == 0:
            break
        out += rest[:n]
        rest = rest[n + 2:]
    rest = out
print(json.loads(rest)["status"]["userInfo"]["username"])
`;

describe.skipIf(!can.ok)(
  `a pod on the real node reaches its cluster's apiserver${can.ok ? "" : ` (skipped: ${can.reason})`}`,
  () => {
    let fleet: Fleet;
    let registry: LocalRegistry;
    let node: RealNode;
    let kube: KubeHttp;
    let image = "";

    beforeAll(async () => {
      [fleet, registry] = await Promise.all([
        startFleet({ clusters: [{ name: "api", kind: "gpu", nodes: [] }] }),
        startRegistry({ name: "apiserver-journey" }),
      ]);
      node = await startRealNode({
        cluster: fleet.cluster("api"),
        name: NODE,
        gpuModel: "NVIDIA-L4",
        gpuCount: 1,
        registries: [registry.host],
      });
      // The terminal image: the session images' Debian base (Python with its ssl module) and little more.
      image = (await pushSessionImage(buildSessionImage("terminal", { quiet: true }), registry.host)).ref;
      const c = fleet.cluster("api");
      kube = new KubeHttp({ server: c.server, caPem: c.caPem, token: c.adminToken });
    }, 900_000);

    afterAll(async () => {
      kube?.close();
      await node?.stop();
      await Promise.all([registry?.stop(), fleet?.stop()]);
    }, 180_000);

    it("the kubernetes Service's endpoint is on the node's bridge, and a pod there is answered as its service account", async () => {
      const slice = await kube.json<any>(
        "GET",
        "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes",
      );
      expect(slice.endpoints).toEqual([expect.objectContaining({ addresses: [node.apiserver.address] })]);
      expect(slice.ports).toEqual([{ name: "https", port: node.apiserver.port, protocol: "TCP" }]);
      const service = await kube.json<any>("GET", "/api/v1/namespaces/default/services/kubernetes");
      expect(service.spec.ports[0].targetPort).toBe(node.apiserver.port);

      await kube.json("POST", "/api/v1/namespaces/default/pods", {
        metadata: { name: "asks-the-apiserver" },
        spec: {
          nodeName: NODE,
          tolerations: [{ ...REAL_NODE_TAINT, operator: "Equal" }],
          restartPolicy: "Never",
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: "client",
              image,
              command: ["python3", "-c", CLIENT],
              env: [
                { name: "API_ADDRESS", value: slice.endpoints[0].addresses[0] },
                { name: "API_PORT", value: String(slice.ports[0].port) },
              ],
            },
          ],
        },
      });
      const done = await eventually(
        async () => {
          const p = await kube.json<any>("GET", "/api/v1/namespaces/default/pods/asks-the-apiserver");
          return ["Succeeded", "Failed"].includes(p.status.phase) ? p : undefined;
        },
        { what: "the pod finished", timeoutMs: 180_000 },
      );
      const log = (await kube.raw("GET", "/api/v1/namespaces/default/pods/asks-the-apiserver/log")).text;
      expect(done.status.phase, log).toBe("Succeeded");
      expect(log.trim().split("\n")).toEqual(["HTTP/1.1 201 Created", "system:serviceaccount:default:default"]);
    }, 300_000);
  },
);
