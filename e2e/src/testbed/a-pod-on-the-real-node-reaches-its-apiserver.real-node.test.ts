// biome-ignore-all lint/suspicious/noExplicitAny: the test reads the apiserver's JSON as it comes
// A pod on the bed's real node reaches its cluster's apiserver (e2e/src/testbed/real-node/apiserver.ts): the
// `kubernetes` Service's EndpointSlice names an address on the node's bridge, and a pod there connects to it,
// checks the apiserver's certificate with its service account's CA under the Service's name, and is
// answered as its service account. Real parts: the bed's apiserver and controller manager (the account, its
// token, the CA), a real kubelet and containerd, Python's TLS in the pod. Where canRunRealNode() says yes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PodsOnTheRealNode, startPodsOnTheRealNode } from "./pods-on-the-real-node.test-support.ts";
import { canRunRealNode } from "./real-node/index.ts";

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
    let bed: PodsOnTheRealNode;

    beforeAll(async () => {
      bed = await startPodsOnTheRealNode({ cluster: "api", node: NODE, registry: "apiserver-journey" });
    }, 900_000);

    afterAll(async () => {
      await bed?.stop();
    }, 180_000);

    it("the kubernetes Service's endpoint is on the node's bridge, and a pod there is answered as its service account", async () => {
      const slice = await bed.kube.json<any>(
        "GET",
        "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes",
      );
      expect(slice.endpoints).toEqual([expect.objectContaining({ addresses: [bed.node.apiserver.address] })]);
      expect(slice.ports).toEqual([{ name: "https", port: bed.node.apiserver.port, protocol: "TCP" }]);
      const service = await bed.kube.json<any>("GET", "/api/v1/namespaces/default/services/kubernetes");
      expect(service.spec.ports[0].targetPort).toBe(bed.node.apiserver.port);

      const { exitCode, log } = await bed.runToEnd("asks-the-apiserver", {
        name: "client",
        command: ["python3", "-c", CLIENT],
        env: [
          { name: "API_ADDRESS", value: slice.endpoints[0].addresses[0] },
          { name: "API_PORT", value: String(slice.ports[0].port) },
        ],
      });
      expect(exitCode, log).toBe(0);
      expect(log.trim().split("\n")).toEqual(["HTTP/1.1 201 Created", "system:serviceaccount:default:default"]);
    }, 300_000);
  },
);
