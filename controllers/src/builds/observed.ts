// What the build controller watches in the builds namespace (builds/controller.ts): ImageBuilds, their
// Jobs and the Jobs' pods. A Job and its ConfigMap carry the ImageBuild's name; a pod carries the build
// id, mapped back to its ImageBuild here.
import { buildResourceName, ImageBuildKind, resourcePath } from "@berth/crds";
import type { Logger } from "pino";
import type { KubeApi } from "../kube/client.ts";
import { errInfo } from "../kube/errors.ts";
import { Informer, type KubeObject } from "../kube/informer.ts";
import { BUILD_LABEL, BUILD_SELECTOR } from "./manifests.ts";

export interface Build extends KubeObject {
  metadata: KubeObject["metadata"] & { name: string; uid?: string; deletionTimestamp?: string };
  spec: {
    buildId: string;
    cluster: string;
    dockerfile: string;
    destination: string;
    baseImage?: string;
    insecureRegistry: boolean;
    pushSecret?: string;
    builderImage: string;
    timeoutSeconds: number;
    egressCidrs: string[];
  };
}
export interface Job extends KubeObject {
  metadata: KubeObject["metadata"] & { name: string; creationTimestamp?: string; labels?: Record<string, string> };
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}
export interface Pod extends KubeObject {
  metadata: KubeObject["metadata"] & { name: string; creationTimestamp?: string; labels?: Record<string, string> };
  status?: { phase?: string };
}

type Labelled = { metadata?: { name?: string; labels?: Record<string, string> } };

export interface ObservedBuildsDeps {
  kube: KubeApi;
  namespace: string;
  log: Logger;
  /** An ImageBuild, its Job or its pod changed: look at the ImageBuild of that name again. */
  onChange(name: string): void;
}

export class ObservedBuilds {
  readonly builds: Informer<Build>;
  readonly jobs: Informer<Job>;
  readonly pods: Informer<Pod>;
  readonly #d: ObservedBuildsDeps;

  constructor(d: ObservedBuildsDeps) {
    this.#d = d;
    const ns = d.namespace;
    const log = d.log;
    const enqueue = (o: Labelled, byLabel: boolean) => {
      const name = byLabel ? this.jobNameOf(o) : o.metadata?.name;
      if (name) d.onChange(name);
    };
    this.builds = new Informer<Build>({
      kube: d.kube,
      path: resourcePath(ImageBuildKind, { namespace: ns }),
      onEvent: (e) => enqueue(e.object, false),
      onError: (err, what) => log.warn({ error: errInfo(err) }, `image builds: ${what}`),
    });
    this.jobs = new Informer<Job>({
      kube: d.kube,
      path: `/apis/batch/v1/namespaces/${ns}/jobs`,
      labelSelector: BUILD_SELECTOR,
      onEvent: (e) => enqueue(e.object, true),
      onError: (err, what) => log.warn({ error: errInfo(err) }, `build jobs: ${what}`),
    });
    this.pods = new Informer<Pod>({
      kube: d.kube,
      path: `/api/v1/namespaces/${ns}/pods`,
      labelSelector: BUILD_SELECTOR,
      onEvent: (e) => enqueue(e.object, true),
      onError: (err, what) => log.warn({ error: errInfo(err) }, `build pods: ${what}`),
    });
  }

  get synced(): boolean {
    return this.builds.synced && this.jobs.synced && this.pods.synced;
  }

  start(): void {
    this.builds.start();
    this.jobs.start();
    this.pods.start();
  }

  async waitForSync(): Promise<void> {
    await Promise.all([this.builds.waitForSync(), this.jobs.waitForSync(), this.pods.waitForSync()]);
  }

  async stop(): Promise<void> {
    await Promise.all([this.builds.stop(), this.jobs.stop(), this.pods.stop()]);
  }

  build(name: string): Build | undefined {
    return this.builds.store.get(`${this.#d.namespace}/${name}`);
  }

  job(name: string): Job | undefined {
    return this.jobs.store.get(`${this.#d.namespace}/${name}`);
  }

  /** Names of the Jobs whose ImageBuild is gone. */
  *orphanJobs(): Iterable<string> {
    for (const j of this.jobs.store.values()) if (!this.build(j.metadata.name)) yield j.metadata.name;
  }

  /** Job and ConfigMap carry the ImageBuild's name; pods carry the build id, mapped back here. */
  jobNameOf(o: Labelled): string | undefined {
    const id = o.metadata?.labels?.[BUILD_LABEL];
    if (!id) return undefined;
    for (const b of this.builds.store.values()) if (b.spec.buildId === id) return b.metadata.name;
    return buildResourceName(id);
  }

  /** The build's newest pod (a Job may retry it). */
  newestPod(buildId: string): Pod | undefined {
    let best: Pod | undefined;
    for (const p of this.pods.store.values())
      if (p.metadata.labels?.[BUILD_LABEL] === buildId)
        if (!best || (p.metadata.creationTimestamp ?? "") > (best.metadata.creationTimestamp ?? "")) best = p;
    return best;
  }
}
