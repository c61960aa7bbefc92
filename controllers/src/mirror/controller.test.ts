// The mirror controller in-process against an apiserver in memory whose pods watch can be made to lag:
// the namespace's NetworkPolicy comes before any pod and comes back when deleted, and a reconcile woken
// before the pods watch shows the pod it created does not create it again (nor keeps a phantom of it).
import { resourcePath, type SessionMirror, SessionMirrorKind } from "@berth/crds";
import { examples } from "@berth/crds/testing";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { RequestOptions, WatchEvent } from "../kube/client.ts";
import { MemoryKube } from "../sessions/memory-kube.test-support.ts";
import { type RunningMirrorController, startSessionMirrorController } from "./controller.ts";
import { SESSIONS_POLICY_NAME, sessionsNetworkPolicyManifest } from "./manifests.ts";

const NS = "berth-sessions";
const MIRRORS = resourcePath(SessionMirrorKind, { namespace: NS });
const POLICIES = `/apis/networking.k8s.io/v1/namespaces/${NS}/networkpolicies`;

/** Delivers pod watch events `podLagMs` late, as a busy apiserver's watch cache does. */
class LaggingKube extends MemoryKube {
  podLagMs = 0;
  /** Pod watch events the watcher has been handed (after the lag). */
  podEventsDelivered = 0;
  override async watch(
    path: string,
    query: RequestOptions["query"],
    onEvent: (e: WatchEvent) => void,
    opts: { signal?: AbortSignal; idleTimeoutMs: number; onOpen?: () => void },
  ): Promise<void> {
    const lagged = path.endsWith("/pods")
      ? (e: WatchEvent) =>
          void setTimeout(() => {
            this.podEventsDelivered++;
            onEvent(e);
          }, this.podLagMs)
      : onEvent;
    return super.watch(path, query, lagged, opts);
  }
}

function aMirror(name = "ses-1"): SessionMirror {
  const m = examples.SessionMirror();
  m.metadata = { name, namespace: NS };
  return m;
}

let running: RunningMirrorController | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

function start(kube: MemoryKube, more: { nodeGone?: (name: string) => boolean } = {}) {
  running = startSessionMirrorController({
    kube,
    clusterId: "clu_a1",
    report: async () => {},
    log: pino({ level: "silent" }),
    options: { resyncMs: 3_600_000 },
    ...more,
  });
  return running;
}

async function until(what: string, ok: () => boolean, timeoutMs = 5_000): Promise<void> {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const requests = (kube: MemoryKube, method: string, pathEnd: string) =>
  kube.log.filter((r) => r.method === method && r.path.split("?")[0]?.endsWith(pathEnd));
const podNamed = (kube: MemoryKube, name: string) => kube.list("pods").find((p) => p.metadata.name === name);

/** A mirror and its pod, created through a pods watch running `podLagMs` behind. */
async function withItsPod(podLagMs: number) {
  const kube = new LaggingKube();
  kube.podLagMs = podLagMs;
  kube.put("sessionmirrors", aMirror() as never);
  const c = start(kube);
  await until("the pod", () => podNamed(kube, "ses-1") !== undefined);
  return { kube, c };
}

describe("the mirror controller", () => {
  it("creates the namespace's policy once, before the first pod, and no policy per session", async () => {
    const kube = new LaggingKube();
    kube.put("sessionmirrors", aMirror("ses-1") as never);
    kube.put("sessionmirrors", aMirror("ses-2") as never);
    const c = start(kube);
    await until("both pods", () => kube.list("pods").length === 2);
    await c.idle();
    expect(kube.list("networkpolicies").map((p) => p.metadata.name)).toEqual([SESSIONS_POLICY_NAME]);
    const firstPolicy = kube.log.findIndex((r) => r.method === "POST" && r.path.endsWith("/networkpolicies"));
    const firstPod = kube.log.findIndex((r) => r.method === "POST" && r.path.endsWith("/pods"));
    expect(firstPolicy).toBeGreaterThanOrEqual(0);
    expect(firstPolicy).toBeLessThan(firstPod);
    expect(requests(kube, "POST", "/networkpolicies")).toHaveLength(1);
    expect(c.counts.policyWrites).toBe(1);
  });

  it("leaves a policy already in place alone, and puts it back when it is deleted", async () => {
    const kube = new LaggingKube();
    const manifest = sessionsNetworkPolicyManifest({ namespace: NS });
    kube.put("networkpolicies", manifest as never);
    kube.put("sessionmirrors", aMirror() as never);
    const c = start(kube);
    await until("the pod", () => kube.list("pods").length === 1);
    await c.idle();
    expect(requests(kube, "POST", "/networkpolicies")).toEqual([]);
    expect(requests(kube, "PUT", `/networkpolicies/${SESSIONS_POLICY_NAME}`)).toEqual([]);
    expect(c.counts.policyWrites).toBe(0);
    const writes = kube.log.length;
    await kube.request("DELETE", `${POLICIES}/${SESSIONS_POLICY_NAME}`);
    await until("the policy back", () => kube.list("networkpolicies").length === 1);
    await c.idle();
    expect(requests(kube, "POST", "/networkpolicies").slice(-1)[0]?.status).toBe(201);
    expect(kube.log.length - writes).toBeLessThanOrEqual(3);
    expect(kube.list("networkpolicies")[0]?.spec).toEqual(manifest.spec);
  });

  it("does not create a pod again while its watch has not shown it", async () => {
    const { kube, c } = await withItsPod(400);
    // Reconciles woken inside the window (a mirror update each), as a Service event or a resync would.
    let inWindow = false;
    for (let i = 0; i < 5; i++) {
      await kube.request("PATCH", `${MIRRORS}/ses-1`, { body: { metadata: { annotations: { poke: String(i) } } } });
      if (i === 0) inWindow = kube.podEventsDelivered === 0;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(inWindow, "a reconcile was woken before the pods watch showed the pod").toBe(true);
    // Past the window: the watch has shown the pod, and what it woke has settled.
    await until("the pod shown by its watch", () => kube.podEventsDelivered > 0);
    await c.idle();
    expect(requests(kube, "POST", "/pods").map((r) => r.status)).toEqual([201]);
    expect(c.counts.conflictingCreates).toBe(0);
  });

  it("creates a pod again when it was deleted before its watch showed it (no phantom kept)", async () => {
    const { kube, c } = await withItsPod(300);
    const first = podNamed(kube, "ses-1")?.metadata.uid;
    await kube.request("DELETE", `/api/v1/namespaces/${NS}/pods/ses-1`);
    await until("a new pod", () => {
      const p = podNamed(kube, "ses-1");
      return p !== undefined && p.metadata.uid !== first;
    });
    await c.idle();
    expect(requests(kube, "POST", "/pods").map((r) => r.status)).toEqual([201, 201]);
  });

  it("removes the per-session policy an earlier version made, once the namespace's one is in place", async () => {
    const kube = new LaggingKube();
    kube.put("sessionmirrors", aMirror() as never);
    const uid = kube.list("sessionmirrors")[0]?.metadata.uid as string;
    kube.put("networkpolicies", {
      metadata: {
        name: "ses-1",
        namespace: NS,
        labels: { "app.kubernetes.io/managed-by": "berth-operator", "app.kubernetes.io/name": "berth-session" },
        ownerReferences: [{ apiVersion: "berth.dev/v1alpha1", kind: "SessionMirror", name: "ses-1", uid }],
      },
    });
    const c = start(kube);
    await until("the old policy gone", () =>
      kube.list("networkpolicies").every((p) => p.metadata.name === SESSIONS_POLICY_NAME),
    );
    await c.idle();
    expect(kube.list("networkpolicies").map((p) => p.metadata.name)).toEqual([SESSIONS_POLICY_NAME]);
    const created = kube.log.findIndex((r) => r.method === "POST" && r.path.endsWith("/networkpolicies"));
    const removed = kube.log.findIndex((r) => r.method === "DELETE" && r.path.endsWith("/networkpolicies/ses-1"));
    expect(created).toBeLessThan(removed);
  });

  it("forces the pod of a deleted mirror off a node the apiserver no longer has, and only then", async () => {
    for (const nodeThere of [false, true]) {
      const kube = new LaggingKube();
      const m = aMirror();
      m.metadata.deletionTimestamp = "2026-11-22T06:00:00Z";
      m.metadata.finalizers = ["berth.dev/session-cleanup"];
      kube.put("sessionmirrors", m as never);
      const uid = kube.list("sessionmirrors")[0]?.metadata.uid as string;
      kube.put("pods", {
        metadata: {
          name: "ses-1",
          namespace: NS,
          ownerReferences: [{ apiVersion: "berth.dev/v1alpha1", kind: "SessionMirror", name: "ses-1", uid }],
        },
        spec: { nodeName: "gpu-1" },
        status: { phase: "Running" },
      });
      // The node watch's hint says gone in both cases; only the apiserver's answer differs.
      if (nodeThere) kube.put("nodes", { metadata: { name: "gpu-1" } });
      const c = start(kube, { nodeGone: () => true });
      await until("the pod's deletion", () => requests(kube, "DELETE", "/pods/ses-1").length > 0);
      await c.idle();
      expect(requests(kube, "GET", "/nodes/gpu-1").length).toBeGreaterThan(0);
      const options = requests(kube, "DELETE", "/pods/ses-1")[0]?.body as { gracePeriodSeconds?: number };
      expect(options.gracePeriodSeconds, `node there: ${nodeThere}`).toBe(nodeThere ? undefined : 0);
      await c.stop();
      running = undefined;
    }
  });
});
