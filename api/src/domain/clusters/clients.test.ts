// The process's cluster clients over a stand-in management cluster: which client a caller gets, and when
// a kept one is let go. Pure: the clients are records of what they were made from.
import type { KubeResponse } from "@berth/controllers/kube";
import { type Cluster, ClusterKind, resourcePath } from "@berth/crds";
import { describe, expect, it } from "vitest";
import { type ClusterClient, ClusterClients } from "./clients.ts";
import type { ClusterCredential } from "./credential.ts";
import { CREDENTIAL_SECRET_KEY, credentialToKubeconfigText } from "./credential.ts";

interface Made {
  cred: ClusterCredential;
  closed: number;
  client: ClusterClient;
}

function aStand(): {
  clients: ClusterClients;
  made: Made[];
  secrets: Map<string, ClusterCredential>;
  clusters: Cluster[];
  advance(ms: number): void;
} {
  const secrets = new Map<string, ClusterCredential>();
  const clusters: Cluster[] = [];
  const made: Made[] = [];
  let now = 0;
  const answer = <T>(body: unknown): KubeResponse<T> => ({ status: 200, body: body as T });
  const request = async <T>(_method: string, path: string): Promise<KubeResponse<T>> => {
    if (path === resourcePath(ClusterKind)) return answer({ items: clusters });
    const name = path.split("/").pop() ?? "";
    const cred = secrets.get(name);
    if (!cred) return { status: 404, body: {} as T };
    const text = Buffer.from(credentialToKubeconfigText(cred), "utf8").toString("base64");
    return answer({ data: { [CREDENTIAL_SECRET_KEY]: text } });
  };
  const management = {
    server: "https://management.invalid",
    request,
    async json<T>(method: string, path: string): Promise<T> {
      const res = await request<T>(method, path);
      if (res.status !== 200) throw new Error(`${res.status}`);
      return res.body;
    },
    watch: async () => {},
    stream: async () => {
      throw new Error("not here");
    },
    close() {},
  } as unknown as ClusterClient;
  const clients = new ClusterClients({
    management,
    connect: (cred) => {
      const m: Made = { cred, closed: 0, client: undefined as unknown as ClusterClient };
      const close = () => m.closed++;
      m.client = { server: cred.server, close, closeWhenSettled: close } as unknown as ClusterClient;
      made.push(m);
      return m.client;
    },
    recheckMs: 1_000,
    now: () => now,
  });
  return { clients, made, secrets, clusters, advance: (ms) => (now += ms) };
}

const aCluster = (id: string, secret: string): Cluster =>
  ClusterKind.build(
    { name: id.replace("_", "-") },
    {
      id,
      displayName: id,
      sessionDomain: `${id.replace("_", "-")}.example`,
      credentialSecretRef: { namespace: "berth-system", name: secret, key: CREDENTIAL_SECRET_KEY },
    },
  );

describe("the cluster clients", () => {
  it("keep one client per registered cluster, made from its stored credential", async () => {
    const s = aStand();
    s.secrets.set("cred-a", { server: "https://a.example", token: "a" });
    s.secrets.set("cred-b", { server: "https://b.example", token: "b" });
    const a = aCluster("clu_a", "cred-a");
    const first = await s.clients.forCluster(a);
    expect(await s.clients.forCluster(a)).toBe(first);
    expect(first.server).toBe("https://a.example");
    expect((await s.clients.forCluster(aCluster("clu_b", "cred-b"))).server).toBe("https://b.example");
    expect(s.made).toHaveLength(2);
  });

  it("make a new client when the cluster names another Secret, and close the old one", async () => {
    const s = aStand();
    s.secrets.set("cred-a", { server: "https://a.example", token: "a" });
    s.secrets.set("cred-a2", { server: "https://a.example", token: "a2" });
    const old = await s.clients.forCluster(aCluster("clu_a", "cred-a"));
    const fresh = await s.clients.forCluster(aCluster("clu_a", "cred-a2"));
    expect(fresh).not.toBe(old);
    expect(s.made.map((m) => [m.cred.token, m.closed])).toEqual([
      ["a", 1],
      ["a2", 0],
    ]);
  });

  it("read a kept credential again after a while: a rewritten Secret makes a new client, an unchanged one does not", async () => {
    const s = aStand();
    const a = aCluster("clu_a", "cred-a");
    s.secrets.set("cred-a", { server: "https://a.example", token: "a" });
    const first = await s.clients.forCluster(a);
    s.secrets.set("cred-a", { server: "https://a.example", token: "rotated" });
    expect(await s.clients.forCluster(a)).toBe(first);
    s.advance(1_000);
    const rotated = await s.clients.forCluster(a);
    expect(rotated).not.toBe(first);
    expect(s.made.map((m) => m.cred.token)).toEqual(["a", "rotated"]);
    s.advance(1_000);
    expect(await s.clients.forCluster(a)).toBe(rotated);
  });

  it("find a cluster by its Berth id among the Cluster resources", async () => {
    const s = aStand();
    s.secrets.set("cred-a", { server: "https://a.example", token: "a" });
    s.clusters.push(aCluster("clu_a", "cred-a"));
    const byId = await s.clients.forClusterId("clu_a");
    expect(byId.server).toBe("https://a.example");
    expect(await s.clients.forCluster(aCluster("clu_a", "cred-a"))).toBe(byId);
    await expect(s.clients.forClusterId("clu_gone")).rejects.toThrow(/no Cluster resource for clu_gone/);
  });

  it("forget a deregistered cluster's client, closing it", async () => {
    const s = aStand();
    s.secrets.set("cred-a", { server: "https://a.example", token: "a" });
    const a = aCluster("clu_a", "cred-a");
    const first = await s.clients.forCluster(a);
    s.clients.forget("clu_a");
    expect(s.made[0]?.closed).toBe(1);
    expect(await s.clients.forCluster(a)).not.toBe(first);
  });

  it("give a credential under test a client of its own, never kept", async () => {
    const s = aStand();
    const cred = { server: "https://new.example", token: "t" };
    const one = s.clients.forCredential(cred);
    expect(s.clients.forCredential(cred)).not.toBe(one);
    expect(s.made).toHaveLength(2);
  });
});
