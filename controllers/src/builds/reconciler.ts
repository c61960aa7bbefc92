// Reconciles one ImageBuild (builds/controller.ts): its NetworkPolicy, ConfigMap and Job are made
// (builds/manifests.ts), its pod's log followed (builds/logs.ts), and what the Job does reported as levels
// (Pending with the Job's creation, Running, Succeeded, Failed; builds/plan.ts decides), each level once. A deleted ImageBuild's
// Job and ConfigMap are deleted (the cancel).
import type { Logger } from "pino";
import { type KubeApi, serverSideApply } from "../kube/client.ts";
import type { BuildLogs } from "./logs.ts";
import { BUILD_POLICY, buildConfigMap, buildJob, buildNetworkPolicy } from "./manifests.ts";
import type { Job, ObservedBuilds } from "./observed.ts";
import { type BuildReport, planBuildLevel } from "./plan.ts";

const FIELD_MANAGER = "berth-operator-builds";

export interface BuildReconcilerDeps {
  kube: KubeApi;
  clusterId: string;
  namespace: string;
  observed: ObservedBuilds;
  logs: BuildLogs;
  /** Sends status reports; throws when the control plane did not take them (retried). */
  reportStatus(reports: BuildReport[]): Promise<void>;
  counts: { jobCreates: number; jobDeletes: number; reports: number };
  log: Logger;
  stopped(): boolean;
}

export class BuildReconciler {
  readonly #d: BuildReconcilerDeps;
  /** The level last reported per ImageBuild name (cleared by each resync: a lost report is sent again). */
  readonly reported = new Map<string, string>();
  /** Builds whose Job ended and whose log was drained. */
  readonly #finished = new Set<string>();
  /** The egress the builds' NetworkPolicy was last applied with. */
  #policy = "";

  constructor(d: BuildReconcilerDeps) {
    this.#d = d;
  }

  async reconcile(name: string): Promise<void> {
    const { kube, observed, logs, counts, log } = this.#d;
    const ns = this.#d.namespace;
    if (this.#d.stopped()) return;
    const b = observed.build(name);
    if (!b || b.metadata.deletionTimestamp) {
      await this.#remove(name);
      return;
    }
    if (b.spec.cluster !== this.#d.clusterId) return;
    const egress = JSON.stringify(b.spec.egressCidrs);
    if (this.#policy !== egress) {
      await serverSideApply(
        kube,
        `/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies/${BUILD_POLICY}`,
        buildNetworkPolicy(ns, b.spec.egressCidrs),
        { fieldManager: FIELD_MANAGER, force: true },
      );
      this.#policy = egress;
    }
    let job = observed.job(name);
    if (!job) {
      if (this.#finished.has(name)) return;
      await serverSideApply(kube, `/api/v1/namespaces/${ns}/configmaps/${name}`, buildConfigMap(b, ns), {
        fieldManager: FIELD_MANAGER,
        force: true,
      });
      const made = await kube.request<Job>("POST", `/apis/batch/v1/namespaces/${ns}/jobs`, {
        body: buildJob(b, ns),
      });
      if (made.status === 201) {
        counts.jobCreates++;
        job = made.body;
        log.info({ build: b.spec.buildId, job: name }, "build Job created");
      } else if (made.status === 409) {
        const got = await kube.request<Job>("GET", `/apis/batch/v1/namespaces/${ns}/jobs/${name}`);
        if (got.status !== 200) throw new Error(`reading build Job ${name}: ${got.status}`);
        job = got.body;
      } else throw new Error(`creating build Job ${name}: ${made.status} ${JSON.stringify(made.body).slice(0, 300)}`);
    }
    const pod = observed.newestPod(b.spec.buildId);
    const plan = planBuildLevel({ buildId: b.spec.buildId, job, ...(pod ? { pod } : {}), now: new Date() });
    if (plan.followPod) logs.follow(name, b.spec.buildId, plan.followPod, this.#finished.has(name));
    if (plan.ended) {
      if (!this.#finished.has(name)) await logs.drain(name, b.spec.buildId, pod?.metadata.name);
      this.#finished.add(name);
    }
    await this.#report(name, plan.report);
  }

  async #report(name: string, r: BuildReport): Promise<void> {
    const key = `${r.phase}|${r.job_created_at ?? ""}|${r.message ?? ""}`;
    if (this.reported.get(name) === key) return;
    await this.#d.reportStatus([r]);
    this.#d.counts.reports++;
    this.reported.set(name, key);
  }

  async #remove(name: string): Promise<void> {
    const { kube, observed, counts, log } = this.#d;
    const ns = this.#d.namespace;
    this.#d.logs.forget(name);
    this.reported.delete(name);
    this.#finished.delete(name);
    if (observed.job(name)) {
      const r = await kube.request("DELETE", `/apis/batch/v1/namespaces/${ns}/jobs/${name}`, {
        body: { propagationPolicy: "Background" },
      });
      if (r.status < 300) {
        counts.jobDeletes++;
        log.info({ job: name }, "build Job deleted: its ImageBuild is gone");
      } else if (r.status !== 404) throw new Error(`deleting build Job ${name}: ${r.status}`);
    }
    const cm = await kube.request("DELETE", `/api/v1/namespaces/${ns}/configmaps/${name}`);
    if (cm.status >= 300 && cm.status !== 404) throw new Error(`deleting build ConfigMap ${name}: ${cm.status}`);
  }
}
