// A cluster's credential rewritten in place, on a real apiserver: the kept client is replaced, and a request
// already on the wire on the old one is answered before the old one lets go of its connection. The request
// goes through a relay of the test's own (plain TCP, TLS end to end) so the test knows when it is on the
// wire and when its connection closes.
import { once } from "node:events";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { HttpKube } from "@berth/controllers/kube";
import { ClusterKind } from "@berth/crds";
import { type Fleet, KubeHttp, startFleet } from "@berth/e2e";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterClients } from "./clients.ts";
import { type ClusterCredential, CREDENTIAL_SECRET_KEY, credentialToKubeconfigText } from "./credential.ts";

const NS = "berth-system";
const SECRET = "cred-rotated";

/** Loopback relay to `target`: counts the bytes clients sent, and says when each client connection closed. */
async function aRelay(target: URL): Promise<{ url: string; server: Server; sent(): number; closed: Promise<void>[] }> {
  let sent = 0;
  const closed: Promise<void>[] = [];
  const server = createServer((client: Socket) => {
    closed.push(once(client, "close").then(() => undefined));
    const upstream = createConnection({ host: target.hostname, port: Number(target.port) });
    client.on("data", (b: Buffer) => {
      sent += b.length;
    });
    client.pipe(upstream).pipe(client);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  return { url: `https://127.0.0.1:${port}`, server, sent: () => sent, closed };
}

async function until(what: string, pred: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function within(what: string, p: Promise<unknown>, ms = 30_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  });
  try {
    await Promise.race([p, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

describe("a cluster's credential rotated in place", () => {
  let fleet: Fleet | undefined;
  let admin: KubeHttp | undefined;
  let relay: Awaited<ReturnType<typeof aRelay>> | undefined;
  let clients: ClusterClients | undefined;

  beforeAll(async () => {
    fleet = await startFleet({ clusters: [{ name: "mgmt", kind: "management" }] });
    const mgmt = fleet.cluster("mgmt");
    admin = new KubeHttp({ server: mgmt.server, caPem: mgmt.caPem, token: mgmt.adminToken });
    await admin.ensure("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
    relay = await aRelay(new URL(mgmt.server));
  });
  afterAll(async () => {
    clients?.close();
    relay?.server.close();
    admin?.close();
    await fleet?.stop();
  });

  const writeCredential = async (cred: ClusterCredential) => {
    const data = { [CREDENTIAL_SECRET_KEY]: Buffer.from(credentialToKubeconfigText(cred)).toString("base64") };
    const path = `/api/v1/namespaces/${NS}/secrets`;
    const body = { apiVersion: "v1", kind: "Secret", metadata: { name: SECRET, namespace: NS }, data };
    const res = await (admin as KubeHttp).raw("PUT", `${path}/${SECRET}`, body);
    if (res.status === 404) await (admin as KubeHttp).json("POST", path, body);
    else if (res.status !== 200) throw new Error(`writing the credential: ${res.status}`);
  };

  it("makes a new client, and the old one closes only once the request in flight on it is answered", async () => {
    const mgmt = (fleet as Fleet).cluster("mgmt");
    const r = relay as Awaited<ReturnType<typeof aRelay>>;
    const management = new HttpKube({ server: mgmt.server, caPem: mgmt.caPem, token: mgmt.adminToken });
    clients = new ClusterClients({ management, connect: (cred) => new HttpKube(cred), recheckMs: 0 });
    const cluster = ClusterKind.build(
      { name: "clu-rot" },
      {
        id: "clu_rot",
        displayName: "rotated",
        sessionDomain: "rot.example",
        credentialSecretRef: { namespace: NS, name: SECRET, key: CREDENTIAL_SECRET_KEY },
      },
    );
    // The first credential reaches the apiserver through the relay; the rotated one directly.
    await writeCredential({ server: r.url, caPem: mgmt.caPem, token: mgmt.adminToken });
    const old = await clients.forCluster(cluster);
    // A watch asked as a plain request: the apiserver answers it whole when its timeout ends.
    const inFlight = old.request("GET", "/api/v1/namespaces", { query: { watch: "true", timeoutSeconds: "2" } });
    await until("the request on the wire", () => r.sent() > 0 && r.closed.length === 1);
    await writeCredential({ server: mgmt.server, caPem: mgmt.caPem, token: mgmt.adminToken });
    const fresh = await clients.forCluster(cluster);
    expect(fresh).not.toBe(old);
    expect(fresh.server).toBe(mgmt.server);
    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect(String(answer.body)).toContain(`"name":"${NS}"`);
    // Then the old client lets go of its kept connection.
    await within("the old connection closed", r.closed[0] as Promise<void>);
  });
});
