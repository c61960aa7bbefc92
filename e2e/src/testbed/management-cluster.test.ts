import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi, type KubernetesObject, Watch } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startFleet } from "./fleet.ts";
import { kubeConfigFrom } from "./kubeconfig.ts";
import type { Cluster, Fleet } from "./types.ts";
import { eventually, statusFrom } from "./waiting.test-support.ts";

let fleet: Fleet;
let mgmt: Cluster;
let core: CoreV1Api;

beforeAll(async () => {
  fleet = await startFleet({ clusters: [{ name: "mgmt", kind: "management" }] });
  mgmt = fleet.cluster("mgmt");
  core = kubeConfigFrom(mgmt.kubeconfig).makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: "team-a" } } });
});

afterAll(async () => {
  await fleet?.stop();
});

interface Seen {
  type: string;
  name: string;
  resourceVersion: string;
  /** For ERROR events: the Status's code (410 Expired when the resourceVersion is too old). */
  code?: number;
}

/** Watches config maps of a namespace from a resourceVersion; `events` fills as they arrive. */
async function watchConfigMaps(cluster: Cluster, namespace: string, resourceVersion: string) {
  const events: Seen[] = [];
  let ended: unknown = null;
  const controller = await new Watch(kubeConfigFrom(cluster.kubeconfig)).watch(
    `/api/v1/namespaces/${namespace}/configmaps`,
    { resourceVersion, allowWatchBookmarks: false },
    (type, obj: KubernetesObject) => {
      const code = type === "ERROR" ? (obj as { code?: number }).code : undefined;
      events.push({
        type,
        name: obj.metadata?.name ?? "",
        resourceVersion: obj.metadata?.resourceVersion ?? "",
        ...(code ? { code } : {}),
      });
    },
    (err) => {
      ended = err ?? "closed";
    },
  );
  return { events, ended: () => ended, stop: () => controller.abort() };
}

describe("a management cluster of the test bed", () => {
  test("kubectl works with the admin kubeconfig", () => {
    const out = execFileSync("kubectl", ["--kubeconfig", mgmt.kubeconfigPath, "get", "namespaces", "-o", "name"], {
      encoding: "utf8",
    });
    expect(out).toContain("namespace/kube-system");
    expect(out).toContain("namespace/team-a");
  });

  test("deleting an owner garbage-collects its dependent", async () => {
    const owner = await core.createNamespacedConfigMap({ namespace: "team-a", body: { metadata: { name: "owner" } } });
    await core.createNamespacedConfigMap({
      namespace: "team-a",
      body: {
        metadata: {
          name: "dependent",
          ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "owner", uid: owner.metadata?.uid ?? "" }],
        },
      },
    });
    await core.deleteNamespacedConfigMap({ name: "owner", namespace: "team-a" });
    await eventually(
      async () =>
        (await statusFrom(() => core.readNamespacedConfigMap({ name: "dependent", namespace: "team-a" }))) === 404,
      {
        what: "the dependent to be collected",
      },
    );
  });

  test("an unprivileged ServiceAccount from mintCredential is allowed what its Role grants and denied the rest", async () => {
    const cred = await mgmt.mintCredential({
      name: "reader",
      namespace: "team-a",
      rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list"] }],
      expirationSeconds: 3600,
    });
    expect(cred.username).toBe("system:serviceaccount:team-a:reader");
    expect(new Date(cred.expiresAt).getTime() - Date.now()).toBeGreaterThan(3500_000);
    const asReader = kubeConfigFrom(cred.kubeconfig).makeApiClient(CoreV1Api);

    expect(await statusFrom(() => asReader.listNamespacedConfigMap({ namespace: "team-a" }))).toBe(200);
    expect(await statusFrom(() => asReader.listNamespacedSecret({ namespace: "team-a" }))).toBe(403);
    expect(
      await statusFrom(() =>
        asReader.createNamespacedConfigMap({ namespace: "team-a", body: { metadata: { name: "nope" } } }),
      ),
    ).toBe(403);
    expect(await statusFrom(() => asReader.listNamespacedConfigMap({ namespace: "default" }))).toBe(403);
    expect(await statusFrom(() => asReader.listNode())).toBe(403);
  });

  test("a credential with cluster rules reaches cluster-scoped resources and nothing more", async () => {
    const cred = await mgmt.mintCredential({
      name: "node-watcher",
      clusterRules: [{ apiGroups: [""], resources: ["nodes", "namespaces"], verbs: ["get", "list", "watch"] }],
    });
    expect(cred.namespace).toBe("default");
    const asWatcher = kubeConfigFrom(cred.kubeconfig).makeApiClient(CoreV1Api);
    expect(await statusFrom(() => asWatcher.listNamespace())).toBe(200);
    expect(await statusFrom(() => asWatcher.deleteNamespace({ name: "team-a" }))).toBe(403);
    // kubectl takes the minted kubeconfig as it is.
    const file = join(mgmt.dataDir, "node-watcher.kubeconfig");
    writeFileSync(file, cred.kubeconfig);
    const canI = execFileSync("kubectl", ["--kubeconfig", file, "auth", "can-i", "list", "nodes"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    expect(canI.trim()).toBe("yes");
  });

  test("a watch from a resourceVersion sees later changes", async () => {
    const before = await core.listNamespacedConfigMap({ namespace: "team-a" });
    const rv = before.metadata?.resourceVersion ?? "";
    await core.createNamespacedConfigMap({
      namespace: "team-a",
      body: { metadata: { name: "after-1" }, data: { a: "1" } },
    });
    const w = await watchConfigMaps(mgmt, "team-a", rv);
    try {
      await core.patchNamespacedConfigMap({
        name: "after-1",
        namespace: "team-a",
        body: [{ op: "replace", path: "/data/a", value: "2" }],
      });
      await core.deleteNamespacedConfigMap({ name: "after-1", namespace: "team-a" });
      // Created before the watch opened, yet after its resourceVersion: replayed, then the rest in order.
      await eventually(async () => w.events.filter((e) => e.name === "after-1").length >= 3, {
        what: "three events",
        timeoutMs: 10_000,
      });
      expect(w.events.filter((e) => e.name === "after-1").map((e) => e.type)).toEqual(["ADDED", "MODIFIED", "DELETED"]);
    } finally {
      w.stop();
    }
  });

  // The contract client-go's reflectors (and Berth's watches) rely on when an apiserver restarts: the
  // open watch ends; resuming from the last resourceVersion is answered 410 Expired when that version is
  // older than the new apiserver's watch cache (it is, in practice: the restart itself writes); a fresh
  // list then watch sees every later change.
  test("after an apiserver restart an open watch ends, resuming it is Expired or replays, and list-then-watch sees later changes", async () => {
    const rv0 = (await core.listNamespacedConfigMap({ namespace: "team-a" })).metadata?.resourceVersion ?? "";
    const first = await watchConfigMaps(mgmt, "team-a", rv0);
    await core.createNamespacedConfigMap({ namespace: "team-a", body: { metadata: { name: "before-restart" } } });
    await eventually(async () => first.events.find((e) => e.name === "before-restart"), { what: "the first event" });
    const lastSeen = first.events.at(-1)?.resourceVersion ?? "";

    const serverBefore = mgmt.server;
    await mgmt.restartApiServer();
    expect(mgmt.server).toBe(serverBefore);
    await eventually(async () => first.ended() !== null, {
      what: "the open watch to end with the apiserver",
      timeoutMs: 10_000,
    });

    const resumed = await watchConfigMaps(mgmt, "team-a", lastSeen);
    const answer = await eventually(async () => resumed.events[0] ?? (resumed.ended() !== null ? "ended" : undefined), {
      what: "an answer to the resumed watch",
    });
    resumed.stop();
    if (answer !== "ended" && answer.type === "ERROR") expect(answer.code).toBe(410);

    const relisted = await core.listNamespacedConfigMap({ namespace: "team-a" });
    expect(relisted.items.map((c) => c.metadata?.name)).toContain("before-restart");
    const fresh = await watchConfigMaps(mgmt, "team-a", relisted.metadata?.resourceVersion ?? "");
    try {
      await core.createNamespacedConfigMap({ namespace: "team-a", body: { metadata: { name: "after-restart" } } });
      await eventually(async () => fresh.events.find((e) => e.name === "after-restart" && e.type === "ADDED"), {
        what: "the change after the restart",
      });
    } finally {
      fresh.stop();
    }
  });

  test("a CRD with a structural schema rejects an object that violates it", async () => {
    const kc = kubeConfigFrom(mgmt.kubeconfig);
    const ext = kc.makeApiClient(ApiextensionsV1Api);
    await ext.createCustomResourceDefinition({
      body: {
        metadata: { name: "widgets.testbed.berth.dev" },
        spec: {
          group: "testbed.berth.dev",
          scope: "Namespaced",
          names: { plural: "widgets", singular: "widget", kind: "Widget" },
          versions: [
            {
              name: "v1",
              served: true,
              storage: true,
              schema: {
                openAPIV3Schema: {
                  type: "object",
                  properties: {
                    spec: {
                      type: "object",
                      required: ["gpus"],
                      properties: { gpus: { type: "integer", minimum: 1, maximum: 8 }, model: { type: "string" } },
                    },
                  },
                },
              },
            },
          ],
        },
      },
    });
    await eventually(
      async () => {
        const crd = await ext.readCustomResourceDefinition({ name: "widgets.testbed.berth.dev" });
        return crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True");
      },
      { what: "the CRD Established" },
    );

    const custom = kc.makeApiClient(CustomObjectsApi);
    const create = (spec: object, name: string) =>
      statusFrom(() =>
        custom.createNamespacedCustomObject({
          group: "testbed.berth.dev",
          version: "v1",
          namespace: "team-a",
          plural: "widgets",
          body: { apiVersion: "testbed.berth.dev/v1", kind: "Widget", metadata: { name }, spec },
        }),
      );
    // A new CRD's endpoint can answer 404 for a moment after Established.
    await eventually(async () => (await create({ gpus: 2, model: "L4" }, "good")) === 200, {
      what: "a valid Widget created",
    });
    expect(await create({ gpus: 9 }, "too-many")).toBe(422);
    expect(await create({ gpus: "two" }, "not-a-number")).toBe(422);
    expect(await create({ model: "L4" }, "missing-gpus")).toBe(422);
  });
});
