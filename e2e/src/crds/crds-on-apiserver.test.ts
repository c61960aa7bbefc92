// The generated CRDs on a real kube-apiserver: every kind installs, a valid object of each kind is
// stored (and reads back through the zod schema), and every invalid example that zod refuses, the
// apiserver refuses too — including the CEL rules, which only the apiserver can prove.
import { request } from "node:https";
import { allKinds, type KindDefinition, resourcePath, SessionKind } from "@berth/crds";
import { loadCrds } from "@berth/crds/manifests";
import { broken, exampleOf, examples, invalidExamples } from "@berth/crds/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Fleet, KubeHttp, startFleet } from "../index.ts";
import { until } from "../until.ts";

const NAMESPACE = "org-acme";
let fleet: Fleet;
let kube: KubeHttp;

function collection(k: KindDefinition): string {
  return resourcePath(k, k.namespaced ? { namespace: NAMESPACE } : {});
}

function kindOf(name: string): KindDefinition {
  const k = allKinds.find((x) => x.kind === name);
  if (!k) throw new Error(`no kind ${name}`);
  return k;
}

let unique = 0;
/** A copy under a fresh name, so that cases never collide. */
function named<T extends { metadata: { name?: string } }>(o: T): T {
  return { ...o, metadata: { ...o.metadata, name: `${o.metadata.name}-${++unique}` } };
}

beforeAll(async () => {
  fleet = await startFleet({ clusters: [{ name: "mgmt", kind: "management" }] });
  const mgmt = fleet.cluster("mgmt");
  kube = new KubeHttp({ server: mgmt.server, caPem: mgmt.caPem, token: mgmt.adminToken });
  for (const crd of loadCrds()) await kube.json("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
  await kube.json("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: NAMESPACE } });
  // Established first, then the first list answering: only then do creates reach the new handler.
  // A busy machine can take tens of seconds to serve new CRDs; the bound only catches one never served.
  for (const k of allKinds)
    await until(`${k.crdName} served`, async () => (await kube.raw("GET", collection(k))).status === 200, 60_000, 100);
});

afterAll(async () => {
  kube?.close();
  await fleet?.stop();
});

describe("the berth.dev CRDs on a real apiserver", () => {
  it("are all established", async () => {
    for (const k of allKinds) {
      const crd = await kube.json<{ status: { conditions: { type: string; status: string }[] } }>(
        "GET",
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${k.crdName}`,
      );
      expect(crd.status.conditions.find((c) => c.type === "Established")?.status, k.crdName).toBe("True");
      expect(
        crd.status.conditions.find((c) => c.type === "NonStructuralSchema"),
        k.crdName,
      ).toBeUndefined();
    }
  });

  it.each(allKinds.map((k) => [k.kind, k] as const))(
    "store a valid %s, which reads back through its zod schema",
    async (_, k) => {
      const created = await kube.json("POST", collection(k), named(exampleOf(k)));
      expect(k.schema.safeParse(created).error).toBeUndefined();
    },
  );

  it("apply the schema's defaults on the server", async () => {
    const { spec, ...rest } = named(examples.Session());
    const bare = {
      ...rest,
      spec: {
        owner: spec.owner,
        organization: spec.organization,
        offering: spec.offering,
        preset: spec.preset,
        image: spec.image,
      },
    };
    const created = await kube.json<{ spec: Record<string, unknown> }>("POST", collection(SessionKind), bare);
    expect(created.spec).toMatchObject({ desiredState: "Running", priority: 0, volumes: [] });
  });

  it.each(invalidExamples)("refuse %s: %s", async (kind, _what, breakIt) => {
    const k = kindOf(kind);
    const bad = named(broken(kind, breakIt));
    if (bad.status === undefined) {
      const res = await kube.raw("POST", collection(k), bad);
      expect(res.status, res.text).toBe(422);
      return;
    }
    // Status is written only through the subresource; a create drops it.
    const { status, ...withoutStatus } = bad;
    const created = await kube.json<{ metadata: { resourceVersion: string } }>("POST", collection(k), withoutStatus);
    const res = await kube.raw("PUT", `${collection(k)}/${bad.metadata.name}/status`, {
      ...withoutStatus,
      metadata: { ...withoutStatus.metadata, resourceVersion: created.metadata.resourceVersion },
      status,
    });
    expect(res.status, res.text).toBe(422);
  });

  it("refuse a change of a session's owner", async () => {
    const s = named(examples.Session());
    const created = await kube.json<{ metadata: { resourceVersion: string } }>("POST", collection(SessionKind), s);
    const res = await kube.raw("PUT", `${collection(SessionKind)}/${s.metadata.name}`, {
      ...s,
      metadata: { ...s.metadata, resourceVersion: created.metadata.resourceVersion },
      spec: { ...s.spec, owner: "usr_2" },
    });
    expect(res.status, res.text).toBe(422);
    expect(res.text).toContain("is immutable");
  });

  it("refuse a change of a session's GPU count, and its removal once set", async () => {
    const s = named(examples.Session());
    s.spec.gpuCount = 1;
    const created = await kube.json<{ metadata: { resourceVersion: string } }>("POST", collection(SessionKind), s);
    const put = (spec: Record<string, unknown>) =>
      kube.raw("PUT", `${collection(SessionKind)}/${s.metadata.name}`, {
        ...s,
        metadata: { ...s.metadata, resourceVersion: created.metadata.resourceVersion },
        spec,
      });
    const changed = await put({ ...s.spec, gpuCount: 2 });
    expect(changed.status, changed.text).toBe(422);
    expect(changed.text).toContain("is immutable");
    const { gpuCount: _, ...without } = s.spec;
    const removed = await put(without);
    expect(removed.status, removed.text).toBe(422);
    expect(removed.text).toContain("gpuCount cannot be removed once set");
  });

  it("show owner, phase, cluster, GPU model and age as `kubectl get sessions` columns", async () => {
    const s = named(examples.Session());
    const created = await kube.json<{ metadata: { resourceVersion: string } }>("POST", collection(SessionKind), s);
    await kube.json("PUT", `${collection(SessionKind)}/${s.metadata.name}/status`, {
      ...s,
      metadata: { ...s.metadata, resourceVersion: created.metadata.resourceVersion },
      status: { phase: "Running", cluster: "clu_a1", gpuModel: "NVIDIA-H100-80GB-HBM3" },
    });
    const asTable = await getTable(`${collection(SessionKind)}/${s.metadata.name}`);
    expect(asTable.columnDefinitions.map((c) => c.name)).toEqual(
      expect.arrayContaining(["Name", "Owner", "Phase", "Cluster", "GPU Model", "Age"]),
    );
    const row = Object.fromEntries(asTable.columnDefinitions.map((c, i) => [c.name, asTable.rows[0]?.cells[i]]));
    expect(row).toMatchObject({
      Owner: "usr_1",
      Phase: "Running",
      Cluster: "clu_a1",
      "GPU Model": "NVIDIA-H100-80GB-HBM3",
    });
  });
});

/** What kubectl asks for: the server-side table with the CRD's printer columns. */
function getTable(path: string): Promise<{ columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] }> {
  const mgmt = fleet.cluster("mgmt");
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, mgmt.server), {
      ca: mgmt.caPem,
      headers: { authorization: `Bearer ${mgmt.adminToken}`, accept: "application/json;as=Table;v=v1;g=meta.k8s.io" },
    });
    req.on("response", (res) => {
      let text = "";
      res.on("data", (c) => (text += c));
      res.on("end", () =>
        res.statusCode === 200 ? resolve(JSON.parse(text)) : reject(new Error(`${res.statusCode} ${text}`)),
      );
    });
    req.on("error", reject);
    req.end();
  });
}
