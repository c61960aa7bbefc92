// What the mirror controller watches in the sessions namespace: its SessionMirrors, their pods and the
// NetworkPolicies it manages (mirror/controller.ts). Each pod event also feeds the gateway's routes, the
// usage meter and the record of creates the watch has not shown yet (mirror/unseen.ts).
import { LABELS, resourcePath, type SessionMirror, SessionMirrorKind } from "@berth/crds";
import type { Logger } from "pino";
import type { KubeApi } from "../kube/client.ts";
import { Informer, type InformerEvent, type KubeObject } from "../kube/informer.ts";
import type { RoutablePod, SessionRoutes } from "./routes.ts";
import { UnseenCreates } from "./unseen.ts";
import { type MeteredPodView, podRun, type UsageMeter } from "./usage.ts";

export type Obj = KubeObject & { metadata: KubeObject["metadata"] & { uid?: string; deletionTimestamp?: string } };

export interface ObservedMirrorsDeps {
  kube: KubeApi;
  namespace: string;
  unseenCreateMs: number;
  log: Logger;
  meter?: UsageMeter;
  routes?: SessionRoutes;
  on: {
    /** A mirror or its pod changed: look at it again. */
    mirror(key: string): void;
    /** A NetworkPolicy managed here changed. */
    policy(e: InformerEvent<Obj>): void;
  };
}

export class ObservedMirrors {
  readonly mirrors: Informer<SessionMirror & KubeObject>;
  readonly pods: Informer<Obj>;
  /** The namespace's policy and the per-session ones of earlier versions (to remove them). */
  readonly policies: Informer<Obj>;
  /** Pod creates not yet seen by the pod watch, per store key. */
  readonly unseenPods: UnseenCreates;
  readonly #all: Pick<Informer<Obj>, "synced" | "start" | "stop" | "waitForSync">[];

  constructor(d: ObservedMirrorsDeps) {
    const ns = d.namespace;
    const onError = (what: string) => (err: unknown, msg: string) =>
      d.log.warn({ err: String(err), informer: what }, msg);
    this.unseenPods = new UnseenCreates({
      ttlMs: d.unseenCreateMs,
      now: () => Date.now(),
      passed: (rv) => this.pods.passed(rv),
    });
    this.mirrors = new Informer<SessionMirror & KubeObject>({
      kube: d.kube,
      path: resourcePath(SessionMirrorKind, { namespace: ns }),
      parse: (x) => SessionMirrorKind.schema.parse(x) as SessionMirror & KubeObject,
      onEvent: (e) => d.on.mirror(e.key),
      onError: onError("sessionmirrors"),
    });
    const meter = d.meter;
    this.pods = new Informer<Obj>({
      kube: d.kube,
      path: `/api/v1/namespaces/${ns}/pods`,
      labelSelector: `${LABELS.name}=berth-session`,
      onEvent: (e) => {
        this.unseenPods.seen(e.key, e.object.metadata.uid);
        d.routes?.observe(e.object as RoutablePod, e.type === "delete");
        d.on.mirror(e.key);
        const run = meter && podRun(e.object as MeteredPodView, LABELS.sessionId);
        if (run) meter?.observe(run, e.type === "delete");
      },
      onError: onError("pods"),
    });
    // Both kinds of policy carry managed-by=berth-operator.
    this.policies = new Informer<Obj>({
      kube: d.kube,
      path: `/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies`,
      labelSelector: `${LABELS.managedBy}=berth-operator`,
      onEvent: (e) => d.on.policy(e),
      onError: onError("networkpolicies"),
    });
    this.#all = [this.mirrors, this.pods, this.policies];
  }

  get synced(): boolean {
    return this.#all.every((i) => i.synced);
  }

  start(): void {
    for (const i of this.#all) i.start();
  }

  async waitForSync(timeoutMs: number): Promise<void> {
    await Promise.all(this.#all.map((i) => i.waitForSync(timeoutMs)));
  }

  async stop(): Promise<void> {
    await Promise.all(this.#all.map((i) => i.stop()));
  }
}
