// Reconciles one SessionMirror into its pod (mirror/controller.ts): observes the mirror, its pod, its
// claims and the policy state, asks mirror/plan.ts what to do, applies it, and hands the plan's report to
// the batcher (and, when asked, to the mirror's own status for `kubectl get sesm`).
import { resourcePath, type SessionMirror, SessionMirrorKind } from "@berth/crds";
import type { Logger } from "pino";
import type { KubeApi } from "../kube/client.ts";
import type { MirrorManifestOptions } from "./manifests.ts";
import type { ObservedMirrors } from "./observed.ts";
import type { MirrorCounts } from "./options.ts";
import {
  type ClaimView,
  type MirrorAction,
  type MirrorObserved,
  type MirrorPlan,
  type ObjectView,
  type PodView,
  planMirror,
} from "./plan.ts";
import type { PolicyKeeper } from "./policy-keeper.ts";
import type { ReportBatcher } from "./report-batcher.ts";

export interface MirrorReconcilerDeps {
  kube: KubeApi;
  clusterId: string;
  namespace: string;
  manifest: MirrorManifestOptions;
  observed: ObservedMirrors;
  policy: PolicyKeeper;
  reports: ReportBatcher;
  counts: MirrorCounts;
  log: Logger;
  now(): Date;
  /** Also write the mirror's status on a change of phase. */
  writeStatus: boolean;
  /** True when the named node may not exist (MirrorControllerDeps.nodeGone). */
  nodeGone?(name: string): boolean;
}

export class MirrorReconciler {
  readonly #d: MirrorReconcilerDeps;
  /** The phase last written to each mirror's status. */
  readonly #phases = new Map<string, string>();

  constructor(d: MirrorReconcilerDeps) {
    this.#d = d;
  }

  async reconcile(key: string): Promise<{ requeueAfterMs?: number } | undefined> {
    const { observed: o, manifest } = this.#d;
    const m = o.mirrors.store.get(key);
    if (!m) {
      if (this.#d.reports.gone(key)) this.#phases.delete(key);
      return undefined;
    }
    if (m.spec.cluster !== this.#d.clusterId) {
      this.#d.log.warn({ key, cluster: m.spec.cluster }, "a mirror for another cluster; ignored");
      return undefined;
    }
    const pod = o.pods.store.get(key) as PodView | undefined;
    // The watch may show an object before its create's answer arrives: the store has it, the record goes.
    if (pod) o.unseenPods.seen(key, pod.metadata.uid);
    const unseenPod = pod ? undefined : o.unseenPods.pending(key);
    const observed: MirrorObserved = {
      mirror: m,
      claims: pod || m.metadata.deletionTimestamp ? {} : await this.#claimsOf(m),
      now: this.#d.now(),
      ...(pod ? { pod } : {}),
      ...(o.policies.store.get(key) ? { networkPolicy: o.policies.store.get(key) as ObjectView } : {}),
      ...(unseenPod !== undefined ? { unseenPod: { expiresInMs: unseenPod } } : {}),
    };
    let plan = planMirror(observed, manifest);
    // A pod being deleted on a node that is gone is forced at once. The node watch only hints it (it may
    // not show a new node yet); the apiserver's 404 decides, since forcing a pod off a live kubelet would
    // free its name and GPU while its container still runs. Asked only while the pod goes, which is rare.
    const node = pod?.spec?.nodeName;
    if (
      node &&
      this.#d.nodeGone?.(node) &&
      (pod?.metadata.deletionTimestamp || plan.actions.some((a) => a.kind === "deletePod")) &&
      (await this.#nodeAbsent(node))
    )
      plan = planMirror({ ...observed, podNodeGone: true }, manifest);
    // No session pod without the namespace's policy, and an old per-session policy goes only once the
    // namespace's one covers its pod.
    if (
      !m.metadata.deletionTimestamp &&
      plan.actions.some((a) => a.kind === "createPod" || a.kind === "deleteNetworkPolicy")
    )
      await this.#d.policy.inPlace();
    // Creations are independent of each other: in parallel (one round trip instead of two).
    const creates = plan.actions.filter((a) => a.kind.startsWith("create"));
    await Promise.all(creates.map((a) => this.#apply(a, m)));
    for (const a of plan.actions) if (!a.kind.startsWith("create")) await this.#apply(a, m);
    this.#d.reports.report(key, m, plan.report);
    await this.#writeStatus(key, m, plan);
    return plan.requeueAfterMs !== undefined ? { requeueAfterMs: plan.requeueAfterMs } : undefined;
  }

  /** Claims of the volumes the operator makes itself, read while the pod is still to be made. */
  async #claimsOf(m: SessionMirror): Promise<Record<string, ClaimView>> {
    const ns = this.#d.namespace;
    const claims: Record<string, ClaimView> = {};
    for (const v of m.spec.volumes) {
      if (v.storageClass === undefined) continue;
      const res = await this.#d.kube.request<ClaimView>(
        "GET",
        `/api/v1/namespaces/${ns}/persistentvolumeclaims/${v.claimName}`,
      );
      if (res.status === 200) claims[v.claimName] = res.body;
      else if (res.status !== 404) throw new Error(`reading claim ${v.claimName}: ${res.status}`);
    }
    return claims;
  }

  async #nodeAbsent(name: string): Promise<boolean> {
    const res = await this.#d.kube.request("GET", `/api/v1/nodes/${encodeURIComponent(name)}`);
    return res.status === 404;
  }

  // The mirror is passed in, never kept in a shared field: up to `concurrency` reconciles run at once,
  // and a release must patch the finalizers of its own mirror.
  async #apply(a: MirrorAction, current: SessionMirror): Promise<void> {
    const { kube, counts } = this.#d;
    const ns = this.#d.namespace;
    if (a.kind === "createPod") {
      if (await this.#createPod(a.manifest)) counts.podCreates++;
    } else if (a.kind === "deletePod") {
      const res = await kube.request("DELETE", `/api/v1/namespaces/${ns}/pods/${a.name}`, {
        body: {
          apiVersion: "v1",
          kind: "DeleteOptions",
          ...(a.uid ? { preconditions: { uid: a.uid } } : {}),
          ...(a.graceSeconds !== undefined ? { gracePeriodSeconds: a.graceSeconds } : {}),
        },
      });
      if (res.status < 300) counts.podDeletes++;
      else if (res.status !== 404 && res.status !== 409) throw new Error(`deleting pod ${a.name}: ${res.status}`);
    } else if (a.kind === "createClaim") {
      // 409: made already (by this operator before a restart, or a reconcile of another session).
      const res = await kube.request("POST", `/api/v1/namespaces/${ns}/persistentvolumeclaims`, {
        body: a.manifest,
      });
      if (res.status >= 300 && res.status !== 409)
        throw new Error(
          `creating claim ${a.manifest.metadata.name}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`,
        );
    } else if (a.kind === "deleteNetworkPolicy") {
      const path = `/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies/${a.name}`;
      const res = await kube.request("DELETE", path);
      if (res.status >= 300 && res.status !== 404) throw new Error(`deleting ${path}: ${res.status}`);
    } else {
      const name = current.metadata.name;
      const res = await kube.request("PATCH", resourcePath(SessionMirrorKind, { namespace: ns, name }), {
        body: { metadata: { finalizers: a.finalizers, resourceVersion: current.metadata.resourceVersion } },
      });
      if (res.status === 409) throw new Error(`mirror ${name} changed while being released; retrying`);
      if (res.status >= 300 && res.status !== 404) throw new Error(`releasing mirror ${name}: ${res.status}`);
    }
  }

  /**
   * POSTs a pod; true when this call created it. A 409 means one of that name is there too:
   * either way the watch has not shown it yet, so it is recorded as unseen.
   */
  async #createPod(manifest: { metadata: { name: string } }): Promise<boolean> {
    const ns = this.#d.namespace;
    const unseen = this.#d.observed.unseenPods;
    const res = await this.#d.kube.request("POST", `/api/v1/namespaces/${ns}/pods`, { body: manifest });
    const key = `${ns}/${manifest.metadata.name}`;
    if (res.status === 201) {
      unseen.created(key, ...createdOf(res.body));
      return true;
    }
    if (res.status === 409) {
      unseen.created(key);
      this.#d.counts.conflictingCreates++;
      return false;
    }
    throw new Error(`creating pod ${manifest.metadata.name}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  }

  /** The mirror's status (phase, pod, node) on a change of phase, when the controller writes it. */
  async #writeStatus(key: string, m: SessionMirror, plan: MirrorPlan): Promise<void> {
    const ns = this.#d.namespace;
    if (!this.#d.writeStatus || this.#phases.get(key) === plan.report.phase || plan.report.phase === "Terminated")
      return;
    const status = {
      phase: plan.report.phase,
      pod: m.metadata.name,
      ...(plan.report.node ? { node: plan.report.node } : {}),
      observedGeneration: m.metadata.generation,
    };
    // The mirror may say so already (a new leader, whose `#phases` is empty, finds every status written).
    const has = m.status;
    const same =
      has?.phase === status.phase &&
      has.pod === status.pod &&
      has.node === status.node &&
      has.observedGeneration === status.observedGeneration;
    const res = same
      ? undefined
      : await this.#d.kube.request(
          "PATCH",
          resourcePath(SessionMirrorKind, { namespace: ns, name: m.metadata.name, subresource: "status" }),
          { body: { status } },
        );
    if (res && res.status < 300) this.#d.counts.statusWrites++;
    if (!res || res.status < 300) this.#phases.set(key, plan.report.phase);
  }
}

/** The uid and resourceVersion a create answered with. */
function createdOf(body: unknown): [uid?: string, resourceVersion?: string] {
  const m = (body as { metadata?: { uid?: unknown; resourceVersion?: unknown } } | undefined)?.metadata;
  return [
    typeof m?.uid === "string" ? m.uid : undefined,
    typeof m?.resourceVersion === "string" ? m.resourceVersion : undefined,
  ];
}
