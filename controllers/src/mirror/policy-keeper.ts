// The sessions namespace's one NetworkPolicy (every session pod, ingress from the gateway only), kept in
// place before any session pod is created (mirror/controller.ts; the manifest is manifests.ts, the
// decision policy-plan.ts's planSessionsPolicy). It is looked at on the controller's queue under its own
// key.
import type { Logger } from "pino";
import type { KubeApi } from "../kube/client.ts";
import type { Informer, InformerEvent } from "../kube/informer.ts";
import { type MirrorManifestOptions, SESSIONS_POLICY_NAME } from "./manifests.ts";
import type { Obj } from "./observed.ts";
import type { MirrorCounts } from "./options.ts";
import { type PolicyView, planSessionsPolicy } from "./policy-plan.ts";

export interface PolicyKeeperDeps {
  kube: KubeApi;
  namespace: string;
  manifest: MirrorManifestOptions;
  /** The policies watch (mirror/observed.ts). */
  policies: Pick<Informer<Obj>, "synced" | "store">;
  counts: MirrorCounts;
  log: Logger;
}

export class PolicyKeeper {
  readonly #d: PolicyKeeperDeps;
  /** The policy's key in the policies store. */
  readonly #storeKey: string;
  /** Its key on the controller's queue (never a mirror's: mirror keys are `<ns>/<name>`). */
  readonly queueKey: string;
  // `#ready` says it was seen in place (or written) since it was last seen deleted; pods are created only
  // while it holds. `#epoch` counts deletions seen, so an ensure that read the policy just before a
  // deletion does not claim it is there.
  #ready = false;
  #epoch = 0;
  #asWritten: string | undefined;
  #ensuring: Promise<void> | undefined;

  constructor(d: PolicyKeeperDeps) {
    this.#d = d;
    this.#storeKey = `${d.namespace}/${SESSIONS_POLICY_NAME}`;
    this.queueKey = `policy:${this.#storeKey}`;
  }

  /** The resourceVersion of the policy the last look found as written (tests). */
  get asWritten(): string | undefined {
    return this.#asWritten;
  }

  /** A watch event of a managed policy; false when it is not the namespace's one (an old per-session one). */
  observe(e: InformerEvent<Obj>): boolean {
    if (e.key !== this.#storeKey) return false;
    // Deleted or changed by someone: no pod is created until it is back as we wrote it (our own writes
    // come back unchanged).
    if (e.type === "delete" || planSessionsPolicy(e.object as PolicyView, this.#d.manifest).kind !== "none") {
      this.#ready = false;
      this.#epoch++;
    }
    return true;
  }

  /** Resolves once the namespace's policy is in place (for the reconciles waiting to create a pod). */
  async inPlace(): Promise<void> {
    while (!this.#ready) await this.#ensureOnce();
  }

  /** A look that starts now (the queue's, after a watch event): one already running may have read too early. */
  async lookedAt(): Promise<undefined> {
    await this.#ensuring?.catch(() => {});
    await this.#ensureOnce();
    return undefined;
  }

  // One ensure at a time (two at once would both POST, one for a 409).
  #ensureOnce(): Promise<void> {
    this.#ensuring ??= this.#ensure().finally(() => {
      this.#ensuring = undefined;
    });
    return this.#ensuring;
  }

  async #read(): Promise<PolicyView | undefined> {
    const policyPath = this.#path;
    const res = await this.#d.kube.request("GET", `${policyPath}/${SESSIONS_POLICY_NAME}`);
    if (res.status === 404) return undefined;
    if (res.status >= 300) throw new Error(`reading network policy ${SESSIONS_POLICY_NAME}: ${res.status}`);
    return res.body as PolicyView;
  }

  async #ensure(): Promise<void> {
    const { kube, policies, manifest, counts, log, namespace } = this.#d;
    const policyPath = this.#path;
    const epoch = this.#epoch;
    // Before the first list, the store knows nothing: ask.
    let observed = policies.synced
      ? (policies.store.get(this.#storeKey) as PolicyView | undefined)
      : await this.#read();
    for (let attempt = 1; ; attempt++) {
      const step = planSessionsPolicy(observed, manifest);
      if (step.kind === "none") {
        this.#asWritten = observed?.metadata.resourceVersion;
        break;
      }
      const res =
        step.kind === "create"
          ? await kube.request("POST", policyPath, { body: step.manifest })
          : await kube.request("PUT", `${policyPath}/${SESSIONS_POLICY_NAME}`, { body: step.manifest });
      if (res.status < 300) {
        counts.policyWrites++;
        log.info(
          { kind: "NetworkPolicy", namespace, name: SESSIONS_POLICY_NAME, step: step.kind },
          "sessions network policy written",
        );
        break;
      }
      // 409: the watch was behind (it exists, or changed since it was read): look at what is there.
      if (res.status !== 409 || attempt >= 3)
        throw new Error(
          `writing network policy ${SESSIONS_POLICY_NAME}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`,
        );
      observed = await this.#read();
    }
    if (epoch === this.#epoch) this.#ready = true;
  }

  get #path(): string {
    return `/apis/networking.k8s.io/v1/namespaces/${this.#d.namespace}/networkpolicies`;
  }
}
