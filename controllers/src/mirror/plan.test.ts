import type { SessionMirror } from "@berth/crds";
import { examples } from "@berth/crds/testing";
import { describe, expect, it } from "vitest";
import { APP_PORTS, podManifest, sessionsNetworkPolicyManifest } from "./manifests.ts";
import { type PodView, planMirror } from "./plan.ts";
import { planSessionsPolicy } from "./policy-plan.ts";

const opts = { namespace: "berth-sessions" };

function aMirror(
  over: { restartCount?: number; deleting?: boolean; kind?: keyof typeof APP_PORTS } = {},
): SessionMirror {
  const m = examples.SessionMirror();
  m.metadata = { name: "ses-abc", namespace: "berth-sessions", uid: "uid-1", generation: 1 };
  m.spec.restartCount = over.restartCount ?? 0;
  if (over.kind) m.spec.imageKind = over.kind;
  if (over.deleting) m.metadata.deletionTimestamp = "2026-11-22T06:00:00Z";
  return m;
}

const owned = (uid = "uid-1") => [{ apiVersion: "berth.dev/v1alpha1", kind: "SessionMirror", name: "ses-abc", uid }];

function aPod(
  over: {
    owner?: string;
    restart?: number;
    phase?: string;
    ready?: boolean;
    node?: string;
    deleting?: boolean;
    waiting?: string;
    unschedulable?: boolean;
    reason?: string;
  } = {},
): PodView {
  const conditions: NonNullable<PodView["status"]>["conditions"] = [];
  if (over.unschedulable)
    conditions.push({
      type: "PodScheduled",
      status: "False",
      reason: "Unschedulable",
      message: "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.",
    });
  if (over.ready) conditions.push({ type: "Ready", status: "True" });
  return {
    metadata: {
      name: "ses-abc",
      uid: "pod-uid",
      labels: { "berth.dev/restart": String(over.restart ?? 0) },
      ownerReferences: owned(over.owner),
      ...(over.deleting ? { deletionTimestamp: "2026-11-22T06:00:00Z" } : {}),
    },
    spec: over.node ? { nodeName: over.node } : {},
    status: {
      phase: over.phase ?? "Pending",
      ...(over.reason ? { reason: over.reason } : {}),
      conditions,
      containerStatuses: over.waiting
        ? [{ name: "session", state: { waiting: { reason: over.waiting, message: `${over.waiting}: nope` } } }]
        : [],
    },
  };
}

const present = {};
/** The per-session policy operators made before the namespace's one. */
const legacyPolicy = { metadata: { name: "ses-abc", ownerReferences: owned() } };
const kinds = (p: ReturnType<typeof planMirror>) => p.actions.map((a) => a.kind);

describe("the mirror reconciler's plan", () => {
  it("creates only the pod for a new mirror (no Service, no policy of its own), and reports Starting", () => {
    const p = planMirror({ mirror: aMirror() }, opts);
    expect(kinds(p)).toEqual(["createPod"]);
    expect(p.report).toMatchObject({ phase: "Starting", reason: "PodPending" });
  });

  it("does not create again what it created a moment ago and its watch has not shown yet", () => {
    const p = planMirror({ mirror: aMirror(), unseenPod: { expiresInMs: 4_000 } }, opts);
    expect(p.actions).toEqual([]);
    expect(p.report).toMatchObject({ phase: "Starting", reason: "PodPending" });
    // Looked at again when the record expires, in case the watch never shows the pod.
    expect(p.requeueAfterMs).toBe(4_000);
  });

  it("removes the per-session policy of an earlier operator version (the namespace's policy covers the pod)", () => {
    const p = planMirror(
      { mirror: aMirror(), pod: aPod({ phase: "Running", ready: true }), ...present, networkPolicy: legacyPolicy },
      opts,
    );
    expect(p.actions).toEqual([{ kind: "deleteNetworkPolicy", name: "ses-abc" }]);
    expect(p.report.phase).toBe("Running");
    const ofAnother = { metadata: { name: "ses-abc", ownerReferences: owned("uid-old") } };
    expect(planMirror({ mirror: aMirror(), ...present, networkPolicy: ofAnother }, opts).actions).not.toContainEqual({
      kind: "deleteNetworkPolicy",
      name: "ses-abc",
    });
  });

  it("reports Running once the pod is running and ready, with its node", () => {
    const p = planMirror(
      { mirror: aMirror(), pod: aPod({ phase: "Running", ready: true, node: "gpu-a-1" }), ...present },
      opts,
    );
    expect(p.actions).toEqual([]);
    expect(p.report).toEqual({ phase: "Running", node: "gpu-a-1", reason: "PodRunning", message: "" });
  });

  it("says why a pod waits for a node", () => {
    const p = planMirror({ mirror: aMirror(), pod: aPod({ unschedulable: true }), ...present }, opts);
    expect(p.report).toMatchObject({ phase: "Starting", reason: "Unschedulable" });
    expect(p.report.message).toContain("Insufficient nvidia.com/gpu");
  });

  it("fails a session whose started app never answers its readiness probe, once its time is up, and says why", () => {
    const started = (at: string): PodView => {
      const pod = aPod({ phase: "Running", node: "n1" });
      (pod.status as NonNullable<PodView["status"]>).containerStatuses = [
        { name: "session", ready: false, state: { running: { startedAt: at } } },
      ];
      return pod;
    };
    const now = new Date("2026-11-22T06:10:00Z");
    const waiting = planMirror(
      { mirror: aMirror(), pod: started("2026-11-22T06:09:00Z"), now, ...present },
      {
        ...opts,
        appReadyTimeoutMs: 120_000,
      },
    );
    expect(waiting.report).toMatchObject({ phase: "Starting", reason: "PodPending", node: "n1" });
    expect(waiting.requeueAfterMs).toBe(60_000);
    const failed = planMirror(
      { mirror: aMirror(), pod: started("2026-11-22T06:08:00Z"), now, ...present },
      {
        ...opts,
        appReadyTimeoutMs: 120_000,
      },
    );
    expect(failed.report).toEqual({
      phase: "Failed",
      node: "n1",
      reason: "PodFailed",
      message:
        "the application did not answer its readiness probe (GET /proxy/ses-abc/api on its port 8888) within 120 s of starting",
    });
  });

  it("reports an image that cannot be pulled as Failed", () => {
    const p = planMirror(
      { mirror: aMirror(), pod: aPod({ node: "n1", waiting: "ImagePullBackOff" }), ...present },
      opts,
    );
    expect(p.report).toMatchObject({ phase: "Failed", reason: "ImagePullFailed", node: "n1" });
  });

  it("replaces a pod that carries an older restart count, then creates the new one once it is gone", () => {
    const mirror = aMirror({ restartCount: 2 });
    const first = planMirror({ mirror, pod: aPod({ restart: 1, phase: "Running", ready: true }), ...present }, opts);
    expect(first.actions).toEqual([{ kind: "deletePod", name: "ses-abc", uid: "pod-uid" }]);
    expect(first.report.phase).toBe("Restarting");
    const waiting = planMirror({ mirror, pod: aPod({ restart: 1, deleting: true }), ...present }, opts);
    expect(waiting.actions).toEqual([]);
    expect(waiting.report.phase).toBe("Restarting");
    const gone = planMirror({ mirror, ...present }, opts);
    expect(kinds(gone)).toEqual(["createPod"]);
    expect(gone.actions[0]).toMatchObject({ manifest: { metadata: { labels: { "berth.dev/restart": "2" } } } });
  });

  it("removes a pod of an earlier placement at once, since it holds the name", () => {
    const p = planMirror(
      { mirror: aMirror(), pod: aPod({ owner: "uid-old", phase: "Running", ready: true }), ...present },
      opts,
    );
    expect(p.actions).toEqual([{ kind: "deletePod", name: "ses-abc", uid: "pod-uid", graceSeconds: 0 }]);
  });

  it("forces a pod of an earlier placement that is stuck going, and looks again meanwhile", () => {
    const pod = aPod({ owner: "uid-old", deleting: true, phase: "Running" });
    const since = Date.parse(pod.metadata.deletionTimestamp as string);
    const soon = planMirror({ mirror: aMirror(), pod, now: new Date(since + 1_000) }, opts);
    expect(soon.actions).toEqual([]);
    expect(soon.requeueAfterMs).toBeGreaterThan(0);
    const stuck = planMirror({ mirror: aMirror(), pod, now: new Date(since + 20_000) }, opts);
    expect(stuck.actions).toEqual([{ kind: "deletePod", name: "ses-abc", uid: "pod-uid", graceSeconds: 0 }]);
  });

  it("replaces a pod the kubelet evicted", () => {
    const p = planMirror({ mirror: aMirror(), pod: aPod({ phase: "Failed", reason: "Evicted" }), ...present }, opts);
    expect(kinds(p)).toEqual(["deletePod"]);
    expect(p.report.phase).toBe("Starting");
  });

  it("waits for a pod deleted by someone else (a drain) to go before recreating it", () => {
    const p = planMirror({ mirror: aMirror(), pod: aPod({ deleting: true, phase: "Running" }), ...present }, opts);
    expect(p.actions).toEqual([]);
    expect(p.report.phase).toBe("Starting");
  });

  it("takes down the pod and policy of a mirror being deleted and creates nothing", () => {
    const p = planMirror(
      {
        mirror: aMirror({ deleting: true }),
        pod: aPod({ phase: "Running", ready: true }),
        ...present,
        networkPolicy: legacyPolicy,
      },
      opts,
    );
    expect(p.actions).toEqual([
      { kind: "deletePod", name: "ses-abc", uid: "pod-uid" },
      { kind: "deleteNetworkPolicy", name: "ses-abc" },
    ]);
    expect(p.report.phase).toBe("Terminating");
  });

  it("lets a deleted mirror go (its finalizer) only once the pod is gone", () => {
    const m = aMirror({ deleting: true });
    m.metadata.finalizers = ["berth.dev/session-cleanup", "other"];
    expect(planMirror({ mirror: m, pod: aPod({ deleting: true }) }, opts).actions).toEqual([]);
    expect(planMirror({ mirror: m }, opts).actions).toEqual([{ kind: "releaseMirror", finalizers: ["other"] }]);
  });

  it("does not let a deleted mirror go while a pod it just created may exist unseen", () => {
    const m = aMirror({ deleting: true });
    m.metadata.finalizers = ["berth.dev/session-cleanup"];
    const p = planMirror({ mirror: m, unseenPod: { expiresInMs: 2_500 } }, opts);
    expect(p.actions).toEqual([]);
    expect(p.requeueAfterMs).toBe(2_500);
  });

  it("forces a pod that has been terminating too long (its node is gone)", () => {
    const pod = aPod({ deleting: true });
    const at = (ms: number) => new Date(Date.parse("2026-11-22T06:00:00Z") + ms);
    expect(planMirror({ mirror: aMirror(), pod, ...present, now: at(1_000) }, opts).actions).toEqual([]);
    expect(planMirror({ mirror: aMirror(), pod, ...present, now: at(20_000) }, opts).actions).toEqual([
      { kind: "deletePod", name: "ses-abc", uid: "pod-uid", graceSeconds: 0 },
    ]);
  });

  it("forces at once a pod whose node is gone, and deletes it without grace when its mirror goes", () => {
    const at = new Date(Date.parse("2026-11-22T06:00:00Z") + 1_000);
    const terminating = aPod({ deleting: true, node: "n1" });
    expect(
      planMirror({ mirror: aMirror(), pod: terminating, ...present, now: at, podNodeGone: true }, opts).actions,
    ).toEqual([{ kind: "deletePod", name: "ses-abc", uid: "pod-uid", graceSeconds: 0 }]);
    const m = aMirror({ deleting: true });
    m.metadata.finalizers = ["berth.dev/session-cleanup"];
    const running = aPod({ phase: "Running", ready: true, node: "n1" });
    expect(planMirror({ mirror: m, pod: running, now: at, podNodeGone: true }, opts).actions).toEqual([
      { kind: "deletePod", name: "ses-abc", uid: "pod-uid", graceSeconds: 0 },
    ]);
    // On a node that is there, the pod keeps its grace period.
    expect(planMirror({ mirror: m, pod: running, now: at }, opts).actions).toEqual([
      { kind: "deletePod", name: "ses-abc", uid: "pod-uid" },
    ]);
  });

  it("changes nothing for a running session (level-based: the same answer every time)", () => {
    const observed = { mirror: aMirror(), pod: aPod({ phase: "Running", ready: true, node: "n1" }), ...present };
    expect(planMirror(observed, opts)).toEqual(planMirror(observed, opts));
    expect(planMirror(observed, opts).actions).toEqual([]);
  });
});

describe("the session pod", () => {
  const pod = podManifest(aMirror(), opts);
  const container = pod.spec.containers[0];

  it("is named after the mirror and owned by it", () => {
    expect(pod.metadata.name).toBe("ses-abc");
    expect(pod.metadata.ownerReferences).toEqual([
      {
        apiVersion: "berth.dev/v1alpha1",
        kind: "SessionMirror",
        name: "ses-abc",
        uid: "uid-1",
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
  });

  it("asks for the GPU runtime class, its GPUs as a limit, and nodes of its model", () => {
    expect(pod.spec.runtimeClassName).toBe("nvidia");
    expect(container?.resources.limits["nvidia.com/gpu"]).toBe("1");
    expect(pod.spec.nodeSelector).toEqual({ "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3" });
    expect(container?.image).toBe("quay.io/jupyter/pytorch-notebook:cuda12-latest");
  });

  it("meets the restricted pod security standard and gets no service-account token", () => {
    expect(pod.spec.automountServiceAccountToken).toBe(false);
    expect(pod.spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
    expect(container?.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
    });
  });

  it("is ready only when its JupyterLab answers its API under the base path on the http port", () => {
    const c = podManifest(aMirror({ kind: "jupyterlab" }), opts).spec.containers[0];
    expect(c?.readinessProbe).toMatchObject({ httpGet: { path: "/proxy/ses-abc/api", port: "http", scheme: "HTTP" } });
  });

  it.each(["terminal", "code-server"] as const)(
    "is ready when its %s listens on the http port (upstream images share no path under the base)",
    (kind) => {
      const c = podManifest(aMirror({ kind }), opts).spec.containers[0];
      expect(c?.readinessProbe).toMatchObject({ tcpSocket: { port: "http" } });
      expect(c?.readinessProbe).not.toHaveProperty("httpGet");
    },
  );

  it("carries the labels that select it", () => {
    expect(pod.metadata.labels).toMatchObject({
      "berth.dev/session": "ses-abc",
      "berth.dev/session-id": "ses_1",
      "berth.dev/owner": "usr_1",
      "berth.dev/organization": "org_acme",
    });
  });
});

/** Whether a NetworkPolicy's matchLabels selector selects an object with these labels. */
const selects = (selector: { matchLabels: Record<string, string> }, labels: Record<string, string>) =>
  Object.entries(selector.matchLabels).every(([k, v]) => labels[k] === v);

describe("the sessions namespace's network policy", () => {
  const np = sessionsNetworkPolicyManifest(opts);

  it.each(Object.keys(APP_PORTS) as (keyof typeof APP_PORTS)[])(
    "applies to every %s session pod: selects it, and admits only the gateway and the operator on its application's port",
    (kind) => {
      const pod = podManifest(aMirror({ kind }), opts);
      expect(np.metadata.namespace).toBe(pod.metadata.namespace);
      expect(selects(np.spec.podSelector, pod.metadata.labels)).toBe(true);
      expect(np.spec.policyTypes).toEqual(["Ingress", "Egress"]);
      expect(np.spec.ingress).toEqual([
        {
          from: [
            {
              namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "berth-system" } },
              podSelector: { matchLabels: { "app.kubernetes.io/name": "berth-gateway" } },
            },
            {
              namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "berth-system" } },
              podSelector: { matchLabels: { "app.kubernetes.io/name": "berth-operator" } },
            },
          ],
          ports: [{ protocol: "TCP", port: "http" }],
        },
      ]);
      // The named port is the pod's application port, and only that one.
      const named = pod.spec.containers.flatMap((c) => c.ports).filter((p) => p.name === "http");
      expect(named).toEqual([{ name: "http", containerPort: APP_PORTS[kind], protocol: "TCP" }]);
    },
  );

  it("lets a session out to the cluster's DNS and public addresses only, not to private ranges", () => {
    const [dns, out] = np.spec.egress;
    expect(dns).toEqual({
      to: [{ namespaceSelector: {}, podSelector: { matchLabels: { "k8s-app": "kube-dns" } } }],
      ports: [
        { protocol: "UDP", port: 53 },
        { protocol: "TCP", port: 53 },
      ],
    });
    expect(out && "ports" in out ? out.ports : undefined).toBeUndefined();
    const peers = (out?.to ?? []) as { ipBlock?: { cidr: string; except?: string[] } }[];
    const exceptOf = (cidr: string) => peers.find((t) => t.ipBlock?.cidr === cidr)?.ipBlock?.except ?? [];
    // The cluster's pods and services, a private control plane, cloud metadata, loopback.
    for (const cidr of [
      "10.0.0.0/8",
      "172.16.0.0/12",
      "192.168.0.0/16",
      "169.254.0.0/16",
      "100.64.0.0/10",
      "127.0.0.0/8",
    ])
      expect(exceptOf("0.0.0.0/0")).toContain(cidr);
    expect(exceptOf("::/0")).toEqual(expect.arrayContaining(["fc00::/7", "fe80::/10"]));
    expect(np.spec.egress).toHaveLength(2);
  });

  it("lets a session reach the private addresses the operator is configured with, and those only", () => {
    const custom = sessionsNetworkPolicyManifest({ ...opts, egressAllow: ["10.20.0.0/16", "169.254.20.10/32"] });
    expect(custom.spec.egress.slice(0, 2)).toEqual(np.spec.egress);
    expect(custom.spec.egress[2]).toEqual({
      to: [{ ipBlock: { cidr: "10.20.0.0/16" } }, { ipBlock: { cidr: "169.254.20.10/32" } }],
    });
  });

  it("selects no gateway, operator or other pod of the namespace", () => {
    expect(selects(np.spec.podSelector, { "app.kubernetes.io/name": "berth-gateway" })).toBe(false);
    expect(selects(np.spec.podSelector, {})).toBe(false);
  });

  it("admits the gateway of the namespace and labels the operator is configured with", () => {
    const custom = sessionsNetworkPolicyManifest({
      ...opts,
      gatewayNamespace: "edge",
      gatewayPodLabels: { app: "gw" },
    });
    expect(custom.spec.ingress[0]?.from?.[0]).toEqual({
      namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "edge" } },
      podSelector: { matchLabels: { app: "gw" } },
    });
  });

  it("is created when absent or being deleted, and left alone when the apiserver holds it (defaults and all)", () => {
    expect(planSessionsPolicy(undefined, opts)).toMatchObject({ kind: "create", manifest: np });
    const stored = {
      metadata: { ...np.metadata, resourceVersion: "7", uid: "u", creationTimestamp: "2026-11-22T06:00:00Z" },
      spec: { ...np.spec, ingress: [{ ...np.spec.ingress[0], from: np.spec.ingress[0]?.from }] },
    };
    expect(planSessionsPolicy(stored, opts)).toEqual({ kind: "none" });
    expect(planSessionsPolicy({ ...stored, metadata: { ...stored.metadata, deletionTimestamp: "x" } }, opts).kind).toBe(
      "create",
    );
  });

  it.each([
    [
      "admits another peer too",
      {
        ingress: [
          { ...np.spec.ingress[0], from: [...(np.spec.ingress[0]?.from ?? []), { ipBlock: { cidr: "0.0.0.0/0" } }] },
        ],
      },
    ],
    ["admits on another port", { ingress: [{ ...np.spec.ingress[0], ports: [{ protocol: "TCP", port: 22 }] }] }],
    ["selects fewer pods", { podSelector: { matchLabels: { ...np.spec.podSelector.matchLabels, extra: "x" } } }],
    ["admits everyone", { ingress: [{}] }],
    ["rules no egress", { policyTypes: ["Ingress"] }],
    ["lets everything out", { egress: [{}] }],
  ])("is put back when someone changed it: %s", (_, change) => {
    const stored = { metadata: { ...np.metadata, resourceVersion: "9" }, spec: { ...np.spec, ...change } };
    expect(planSessionsPolicy(stored, opts)).toEqual({
      kind: "replace",
      manifest: { ...np, metadata: { ...np.metadata, resourceVersion: "9" } },
    });
  });
});
