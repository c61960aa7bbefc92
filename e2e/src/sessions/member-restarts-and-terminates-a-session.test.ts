// Restart replaces the pod (same name, a new pod, never two at once); terminate removes everything in
// the GPU cluster and keeps the session in the history. Another user's session is invisible and
// untouchable; an administrator can inspect the underlying resource and its Kubernetes events. The
// sessions namespace's one NetworkPolicy admits only the gateway to the session's pod, lets it out to DNS
// and public addresses only, and comes back when deleted.

import { SESSIONS_POLICY_NAME } from "@berth/controllers";
import { LABELS, resourcePath, SessionMirrorKind } from "@berth/crds";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bedApi, refusalOf } from "../api-client.ts";
import { until } from "../until.ts";
import { adminKube, SESSIONS_NS, type SessionsBed, SYSTEM_NS, startSessionsBed } from "./harness.ts";

// Journeys wait on real clusters; a loaded machine (other beds running) stretches them.
vi.setConfig({ testTimeout: 180_000 });

let bed: SessionsBed;
let id: string;
let cr: string;
beforeAll(async () => {
  bed = await startSessionsBed();
  const r = await bedApi(bed, bed.alice).call("createSession", {
    body: { offering: "h100", preset: "gpu-small", image: "jupyterlab" },
  });
  id = r.id;
  cr = r.resource_name;
  await bed.waitFor(bed.alice, id, (s) => s.phase === "Running", "Running");
});
afterAll(async () => {
  await bed?.stop();
});

async function objectsOnGpuA(): Promise<Record<string, string[]>> {
  const k = adminKube(bed.fleet.cluster("gpu-a"));
  try {
    const names = async (path: string) =>
      ((await k.json<{ items: { metadata: { name: string } }[] }>("GET", path)).items ?? []).map(
        (i) => i.metadata.name,
      );
    return {
      mirrors: await names(resourcePath(SessionMirrorKind, { namespace: SESSIONS_NS })),
      pods: await names(`/api/v1/namespaces/${SESSIONS_NS}/pods`),
      services: await names(`/api/v1/namespaces/${SESSIONS_NS}/services`),
      policies: await names(`/apis/networking.k8s.io/v1/namespaces/${SESSIONS_NS}/networkpolicies`),
    };
  } finally {
    k.close();
  }
}

describe("another member's session", () => {
  it("is invisible: 404 on detail and every action, absent from lists and the stream's scope", async () => {
    const bob = bedApi(bed, bed.bob);
    const params = { sessionId: id };
    for (const [what, call] of [
      ["getSession", () => bob.call("getSession", { params })],
      ["pauseSession", () => bob.call("pauseSession", { params })],
      ["restartSession", () => bob.call("restartSession", { params })],
      ["terminateSession", () => bob.call("terminateSession", { params })],
      ["changeQueuePriority", () => bob.call("changeQueuePriority", { params, body: { priority: -1 } })],
      ["getSessionResource", () => bob.call("getSessionResource", { params })],
    ] as const) {
      expect((await refusalOf(call())).status, what).toBe(404);
    }
    const all = await bob.call("listSessions", { query: { scope: "all" } });
    expect(all.data.map((s) => s.id)).not.toContain(id);
    // The organization's admin sees it, and may inspect its resource like kubectl would show it.
    const admin = bedApi(bed, bed.orgAdmin);
    expect((await admin.call("listSessions", { query: { scope: "all" } })).data.map((s) => s.id)).toContain(id);
    const res = await admin.call("getSessionResource", { params });
    expect(res.resource).toMatchObject({ kind: "Session", metadata: { name: cr }, status: { phase: "Running" } });
    expect(res.yaml).toContain("phase: Running");
    const events = await admin.call("listSessionResourceEvents", { params });
    expect(events.data.map((e) => e.reason)).toEqual(expect.arrayContaining(["Started"]));
    // The owner sees it through the normal detail, not the administrators' view.
    expect((await refusalOf(bedApi(bed, bed.alice).call("getSessionResource", { params }))).status).toBe(403);
  });
});

interface Selector {
  matchLabels?: Record<string, string>;
  matchExpressions?: unknown[];
}
/** Whether a label selector selects an object with these labels (matchLabels only: we write no expressions). */
const selects = (sel: Selector | undefined, labels: Record<string, string>) =>
  !!sel && !sel.matchExpressions?.length && Object.entries(sel.matchLabels ?? {}).every(([k, v]) => labels[k] === v);

describe("the session's network isolation", () => {
  const policyPath = `/apis/networking.k8s.io/v1/namespaces/${SESSIONS_NS}/networkpolicies`;

  it("is the namespace's one policy: it selects the pod and admits only the gateway and the operator, on the pod's app port", async () => {
    const k = adminKube(bed.fleet.cluster("gpu-a"));
    try {
      // One policy for the namespace, none per session.
      const all = await k.json<{ items: { metadata: { name: string } }[] }>("GET", policyPath);
      expect(all.items.map((p) => p.metadata.name)).toEqual([SESSIONS_POLICY_NAME]);
      const np = all.items[0] as unknown as {
        spec: {
          podSelector: Selector;
          policyTypes: string[];
          ingress: {
            from: { namespaceSelector?: Selector; podSelector?: Selector; ipBlock?: unknown }[];
            ports: { protocol: string; port: string | number }[];
          }[];
          egress?: unknown[];
        };
      };
      const pod = await k.json<{
        metadata: { labels: Record<string, string> };
        spec: { containers: { ports?: { name?: string; containerPort: number }[] }[] };
      }>("GET", `/api/v1/namespaces/${SESSIONS_NS}/pods/${cr}`);
      // It applies to this pod, as a policy of types Ingress and Egress: everything not admitted is denied.
      expect(selects(np.spec.podSelector, pod.metadata.labels)).toBe(true);
      expect(np.spec.policyTypes).toEqual(["Ingress", "Egress"]);
      // Out: DNS, and public addresses only (the apiserver kept the rules as written).
      const out = JSON.stringify(np.spec.egress);
      expect(out).toContain('"k8s-app":"kube-dns"');
      expect(out).toContain('"except":["10.0.0.0/8"');
      // Held as written: the operator does not put it back over and over (its compare would see a change).
      // Touched where its compare does not look (an annotation), the operator looks at it again: once it
      // has found that very version as written, it wrote nothing after it.
      const op = bed.gpu["gpu-a"]?.operator?.sessionMirrors();
      if (!op) throw new Error("gpu-a's operator is not leading");
      const writes = op.counts.policyWrites;
      const touched = await k.json<{ metadata: { resourceVersion: string } }>(
        "PATCH",
        `${policyPath}/${SESSIONS_POLICY_NAME}`,
        { metadata: { annotations: { "example.com/touched": "yes" } } },
        "application/merge-patch+json",
      );
      await until(
        "the operator to find the touched policy as written",
        async () => op.policyAsWritten === touched.metadata.resourceVersion,
        10_000,
        50,
      );
      const now = await k.json<{ metadata: { resourceVersion: string } }>(
        "GET",
        `${policyPath}/${SESSIONS_POLICY_NAME}`,
      );
      expect(now.metadata.resourceVersion).toBe(touched.metadata.resourceVersion);
      expect(op.counts.policyWrites).toBe(writes);
      // One rule, two peers: the gateway's pods (people's traffic) and the operator's (it reads the
      // notebook's kernels for the idle rule), both in the system namespace; no address range.
      expect(np.spec.ingress).toHaveLength(1);
      const [rule] = np.spec.ingress;
      expect(rule?.from).toHaveLength(2);
      for (const peer of rule?.from ?? []) {
        expect(peer.ipBlock).toBeUndefined();
        expect(selects(peer.namespaceSelector, { "kubernetes.io/metadata.name": SYSTEM_NS })).toBe(true);
        expect(selects(peer.namespaceSelector, { "kubernetes.io/metadata.name": SESSIONS_NS })).toBe(false);
        expect(selects(peer.podSelector, pod.metadata.labels)).toBe(false);
      }
      const admits = (labels: Record<string, string>) => rule?.from.some((p) => selects(p.podSelector, labels));
      expect(admits({ "app.kubernetes.io/name": "berth-gateway" })).toBe(true);
      expect(admits({ "app.kubernetes.io/name": "berth-operator" })).toBe(true);
      expect(admits({ "app.kubernetes.io/name": "berth-api" })).toBe(false);
      // On the application's port alone: the named port resolves to the pod's JupyterLab port.
      expect(rule?.ports).toEqual([{ protocol: "TCP", port: "http" }]);
      const named = pod.spec.containers.flatMap((c) => c.ports ?? []).filter((p) => p.name === "http");
      expect(named.map((p) => p.containerPort)).toEqual([8888]);
    } finally {
      k.close();
    }
  });

  it("comes back when someone deletes it", async () => {
    const k = adminKube(bed.fleet.cluster("gpu-a"));
    try {
      const before = await k.json<{ metadata: { uid: string } }>("GET", `${policyPath}/${SESSIONS_POLICY_NAME}`);
      await k.json("DELETE", `${policyPath}/${SESSIONS_POLICY_NAME}`);
      await until(
        "the policy recreated",
        async () => {
          const r = await k.raw("GET", `${policyPath}/${SESSIONS_POLICY_NAME}`, undefined);
          return r.status === 200 && (r.body as { metadata: { uid: string } }).metadata.uid !== before.metadata.uid;
        },
        10_000,
        100,
      );
    } finally {
      k.close();
    }
  });
});

describe("restart", () => {
  it("replaces the pod with a new one of the same name, never two at once", async () => {
    const before = (await bed.pods("gpu-a")).find((p) => p.name === cr);
    await bedApi(bed, bed.alice).call("restartSession", { params: { sessionId: id } });
    // Every pod of the session, whatever its name and terminating ones included, sampled until Running
    // again: a replacement started before the old pod is gone would be counted here.
    const counts: number[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        counts.push((await bed.pods("gpu-a")).filter((p) => p.labels[LABELS.session] === cr).length);
        await new Promise((res) => setTimeout(res, 50));
      }
    })();
    try {
      await bed.waitFor(bed.alice, id, (s) => s.phase === "Restarting" || s.restarts === 1, "Restarting");
      const back = await bed.waitFor(
        bed.alice,
        id,
        (s) => s.phase === "Running" && s.restarts === 1,
        "Running after restart",
      );
      expect(back.allowed_actions).toContain("restart");
    } finally {
      sampling = false;
      await sampler;
    }
    const after = (await bed.pods("gpu-a")).find((p) => p.name === cr);
    expect(after?.uid).not.toBe(before?.uid);
    // Sampled, and the session's pod was seen: an empty or blind sampler proves nothing.
    expect(counts.length).toBeGreaterThan(0);
    expect(counts.some((n) => n === 1)).toBe(true);
    expect(Math.max(...counts)).toBeLessThanOrEqual(1);
  });
});

describe("terminate", () => {
  it("removes the mirror and pod (no Service was made), keeps the history, and refuses further actions", async () => {
    expect(await objectsOnGpuA()).toEqual({
      mirrors: [cr],
      pods: [cr],
      services: [], // none per session: the gateway follows the pod itself
      policies: [SESSIONS_POLICY_NAME],
    });
    const terminate = () => bedApi(bed, bed.alice).call("terminateSession", { params: { sessionId: id } });
    await terminate();
    const done = await bed.waitFor(bed.alice, id, (s) => s.phase === "Terminated", "Terminated");
    expect(done.allowed_actions).toEqual([]);
    expect(done.terminated_at).not.toBeNull();
    // The namespace's policy stays for the next session.
    await expect
      .poll(objectsOnGpuA, { timeout: 10_000, interval: 100 })
      .toEqual({ mirrors: [], pods: [], services: [], policies: [SESSIONS_POLICY_NAME] });
    const again = await refusalOf(terminate());
    expect(again.status).toBe(409);
    expect(again.code).toBe("invalid_session_state");
    // Lists page over history rows, which the worker writes just after the status.
    await expect
      .poll(async () =>
        (await bedApi(bed, bed.alice).call("listSessions", { query: { phase: "Terminated" } })).data.map((s) => s.id),
      )
      .toContain(id);
  });
});
