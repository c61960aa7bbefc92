// Image builds, a leader-only loop of the worker. Each pass drives every build in flight on its build
// cluster (through that cluster's registered credential): writes the namespace, NetworkPolicy, ConfigMap
// and Job (api/src/domain/images/buildJob.ts) of a queued build; marks it running once its pod runs;
// copies new log lines into Postgres in batches (size-capped); deletes the Job of a cancelled build; and
// when the Job ends, trusts the digest the build printed only as far as Berth's registry confirms it:
// the manifest must be there under that digest, else the build fails. Success publishes the private
// Image resource and marks the image ready; failure frees the image's slot.

import { createHash } from "node:crypto";
import type { KubeApi } from "@berth/controllers/kube";
import { serverSideApply } from "@berth/controllers/kube";
import { ImageKind, type KindDefinition } from "@berth/crds";
import type { Knex } from "knex";
import type { Logger } from "pino";
import type { Clock } from "../clock.ts";
import type { ImagesConfig } from "../config.ts";
import { appendBuildLog } from "../db/operations/images/buildLogs.ts";
import { findPrivateImage } from "../db/operations/images/findPrivateImage.ts";
import { listActiveBuilds } from "../db/operations/images/listBuilds.ts";
import type { ImageBuildRow, PrivateImageRow } from "../db/operations/images/types.ts";
import { updateActiveBuild } from "../db/operations/images/updateBuild.ts";
import { deletePrivateImageRow } from "../db/operations/images/updatePrivateImage.ts";
import { createObject, getObject, kubeStatus } from "../domain/catalog/store.ts";
import { announceBuildEnd } from "../domain/images/announce.ts";
import {
  BUILD_LABEL,
  buildConfigMap,
  buildJob,
  buildNamespace,
  buildNetworkPolicy,
  reportedDigest,
} from "../domain/images/buildJob.ts";
import { emitImageUpdated } from "../domain/images/events.ts";
import { imageResource } from "../domain/images/privateImages.ts";
import { MANIFEST_TYPES, RegistryError } from "../domain/images/registry.ts";
import { targetClient } from "../domain/images/sources.ts";

const FIELD_MANAGER = "berth-image-builds";

export interface BuildLoopOptions {
  /** How often builds in flight are looked at; default 1 s. */
  intervalMs?: number;
}

interface Job {
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[]; active?: number };
}
interface Pod {
  metadata: { name: string };
  status?: { phase?: string };
}

export class BuildLoop {
  readonly #db: Knex;
  readonly #kube: KubeApi;
  readonly #config: ImagesConfig;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #clusterClient: (clusterId: string) => Promise<KubeApi>;
  readonly #intervalMs: number;
  /** Clusters whose namespace and NetworkPolicy this process has written. */
  readonly #prepared = new Set<string>();
  /** Per build: the newest log timestamp stored (lines at or before it are not stored again). */
  readonly #logSince = new Map<string, string>();
  #timer: NodeJS.Timeout | undefined;
  #stopped = true;
  #running: Promise<void> | undefined;

  constructor(
    o: {
      db: Knex;
      kube: KubeApi;
      config: ImagesConfig;
      log: Logger;
      clock?: Clock;
      clusterClient: (clusterId: string) => Promise<KubeApi>;
    } & BuildLoopOptions,
  ) {
    this.#db = o.db;
    this.#kube = o.kube;
    this.#config = o.config;
    this.#log = o.log.child({ component: "image-builds" });
    this.#clock = o.clock ?? { now: () => new Date() };
    this.#clusterClient = o.clusterClient;
    this.#intervalMs = o.intervalMs ?? 1000;
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    const tick = () => {
      if (this.#stopped) return;
      this.#running = this.pass()
        .catch((err: unknown) => this.#log.warn({ err }, "a builds pass failed; retried"))
        .finally(() => {
          this.#running = undefined;
          if (!this.#stopped) this.#timer = setTimeout(tick, this.#intervalMs);
        });
    };
    tick();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  /** One pass over every build in flight (tests call it directly). */
  async pass(): Promise<void> {
    for (const b of await listActiveBuilds(this.#db)) {
      try {
        await this.#drive(b);
      } catch (err) {
        this.#log.warn({ err, build: b.id }, "driving a build failed; retried on the next pass");
      }
    }
  }

  async #drive(b: ImageBuildRow): Promise<void> {
    const kube = await this.#clusterClient(b.cluster_id);
    const ns = this.#config.builds.namespace;
    const jobPath = `/apis/batch/v1/namespaces/${ns}/jobs/${b.job_name}`;
    if (b.cancel_requested) {
      await kube.request("DELETE", jobPath, { body: { propagationPolicy: "Background" } });
      await kube.request("DELETE", `/api/v1/namespaces/${ns}/configmaps/${b.job_name}`);
      await this.#finish(b, "cancelled", null);
      return;
    }
    const image = await findPrivateImage(this.#db, b.image_id);
    if (!image) {
      // Its image was deleted while building: the build has no result to make.
      await kube.request("DELETE", jobPath, { body: { propagationPolicy: "Background" } });
      const now = this.#clock.now();
      await this.#db.transaction(async (tx) => {
        const done = await updateActiveBuild(tx, b.id, { state: "cancelled", finished_at: now });
        if (done) await announceBuildEnd(tx, done, undefined, now);
      });
      return;
    }
    if (!b.job_created_at) {
      await this.#createJob(kube, b, image);
      return;
    }
    const job = await kube.request<Job>("GET", jobPath);
    if (job.status === 404) {
      await this.#fail(b, image, "the build's Job disappeared from its cluster before it finished");
      return;
    }
    const pods = await kube.json<{ items: Pod[] }>("GET", `/api/v1/namespaces/${ns}/pods`, {
      query: { labelSelector: `${BUILD_LABEL}=${b.id}` },
    });
    const pod = pods.items[0];
    const phase = pod?.status?.phase;
    if (b.state === "queued" && pod && (phase === "Running" || phase === "Succeeded" || phase === "Failed"))
      await updateActiveBuild(this.#db, b.id, { state: "running", started_at: this.#clock.now() });
    if (pod && phase !== "Pending") await this.#copyLogs(kube, b, pod.metadata.name);
    const cond = (job.body.status?.conditions ?? []).find(
      (c) => (c.type === "Complete" || c.type === "Failed") && c.status === "True",
    );
    if (!cond) return;
    if (cond.type === "Failed") {
      await this.#fail(b, image, `the build failed: ${cond.message ?? cond.reason ?? "its Job failed"}`);
      return;
    }
    await this.#verifyAndPublish(b, image);
  }

  async #createJob(kube: KubeApi, b: ImageBuildRow, image: PrivateImageRow): Promise<void> {
    const registry = this.#config.registry;
    if (!registry) throw new Error("Berth's registry is not configured");
    const c = this.#config.builds;
    if (!this.#prepared.has(b.cluster_id)) {
      await serverSideApply(kube, `/api/v1/namespaces/${c.namespace}`, buildNamespace(c), {
        fieldManager: FIELD_MANAGER,
        force: true,
      });
      await serverSideApply(
        kube,
        `/apis/networking.k8s.io/v1/namespaces/${c.namespace}/networkpolicies/image-builds`,
        buildNetworkPolicy(c),
        { fieldManager: FIELD_MANAGER, force: true },
      );
      this.#prepared.add(b.cluster_id);
    }
    const input = {
      buildId: b.id,
      jobName: b.job_name,
      dockerfile: b.dockerfile,
      baseReference: b.base_reference,
      destination: `${registry.pullPrefix}/${image.repository}:${image.tag}`,
      insecureRegistry: registry.url.startsWith("http:"),
    };
    await serverSideApply(
      kube,
      `/api/v1/namespaces/${c.namespace}/configmaps/${b.job_name}`,
      buildConfigMap(c, input),
      {
        fieldManager: FIELD_MANAGER,
        force: true,
      },
    );
    const made = await kube.request("POST", `/apis/batch/v1/namespaces/${c.namespace}/jobs`, {
      body: buildJob(c, input),
    });
    if (made.status !== 201 && made.status !== 409) throw new Error(`creating the build Job answered ${made.status}`);
    await updateActiveBuild(this.#db, b.id, { job_created_at: this.#clock.now() });
    this.#log.info({ build: b.id, cluster: b.cluster_id, job: b.job_name }, "build Job created");
  }

  /** New lines since the last copy, as one batch. */
  async #copyLogs(kube: KubeApi, b: ImageBuildRow, pod: string): Promise<void> {
    const since = this.#logSince.get(b.id);
    const r = await kube.request<string>("GET", `/api/v1/namespaces/${this.#config.builds.namespace}/pods/${pod}/log`, {
      query: { timestamps: true, ...(since ? { sinceTime: since } : {}) },
    });
    if (r.status !== 200) return;
    const text = typeof r.body === "string" ? r.body : JSON.stringify(r.body);
    const lines: string[] = [];
    let newest = since;
    for (const raw of text.split("\n")) {
      if (raw === "") continue;
      const sp = raw.indexOf(" ");
      const ts = raw.slice(0, sp);
      if (since && ts <= since) continue;
      lines.push(raw.slice(sp + 1));
      newest = ts;
    }
    if (lines.length === 0) return;
    if (newest) this.#logSince.set(b.id, newest);
    const batch = `${lines.join("\n")}\n`;
    const digest = reportedDigest(batch);
    await appendBuildLog(this.#db, b.id, batch, this.#config.builds.logMaxBytes);
    if (digest) await updateActiveBuild(this.#db, b.id, { reported_digest: digest });
  }

  async #verifyAndPublish(b: ImageBuildRow, image: PrivateImageRow): Promise<void> {
    const current = (await this.#db("image_builds").where({ id: b.id }).first()) as ImageBuildRow;
    const digest = current.reported_digest;
    if (!digest) return this.#fail(b, image, "the build finished without reporting the digest it pushed");
    const target = targetClient(this.#config);
    if (!target) throw new Error("Berth's registry is not configured");
    let size: number;
    try {
      const m = await target.getManifest(image.repository, digest, `repository:${image.repository}:pull`);
      if (`sha256:${createHash("sha256").update(m.bytes).digest("hex")}` !== digest)
        return this.#fail(b, image, `Berth's registry holds other bytes under ${digest}`);
      size = m.bytes.length + (await blobsSize(target, image.repository, m.bytes, m.mediaType));
    } catch (e) {
      if (e instanceof RegistryError && e.kind === "not_found")
        return this.#fail(
          b,
          image,
          `the build reported ${digest}, but Berth's registry has no such manifest in ${image.repository}: nothing was pushed`,
        );
      throw e;
    }
    await this.#publish(image, digest);
    const now = this.#clock.now();
    // The image, the build's end, the stream's event and the owner's notification commit together.
    await this.#db.transaction(async (tx) => {
      const [ready] = (await tx("private_images")
        .where({ id: image.id, state: "building" })
        .update({
          state: "ready",
          digest,
          size_bytes: String(size),
          bytes_total: String(size),
          bytes_copied: String(size),
          ready_at: now,
          updated_at: now,
        })
        .returning("*")) as PrivateImageRow[];
      if (ready) await emitImageUpdated(tx, ready);
      const done = await updateActiveBuild(tx, b.id, { state: "succeeded", finished_at: now });
      if (done) await announceBuildEnd(tx, done, ready ?? image, now);
    });
    this.#logSince.delete(b.id);
    this.#log.info({ build: b.id, digest }, "build succeeded");
  }

  async #publish(image: PrivateImageRow, digest: string): Promise<void> {
    const registry = this.#config.registry;
    if (!registry) throw new Error("Berth's registry is not configured");
    const kind = ImageKind as unknown as KindDefinition;
    const body = imageResource(image, registry.pullPrefix, digest);
    try {
      await createObject(this.#kube, kind, body);
    } catch (e) {
      if (kubeStatus(e) !== 409) throw e;
      const existing = await getObject(this.#kube, kind, image.id);
      if (existing?.spec.image !== body.spec.image) throw e;
    }
  }

  async #fail(b: ImageBuildRow, image: PrivateImageRow, reason: string): Promise<void> {
    const now = this.#clock.now();
    await this.#db.transaction(async (tx) => {
      const [failed] = (await tx("private_images")
        .where({ id: image.id, state: "building" })
        .update({ state: "failed", failure_code: "build_failed", failure_reason: reason, updated_at: now })
        .returning("*")) as PrivateImageRow[];
      if (failed) await emitImageUpdated(tx, failed);
      const done = await updateActiveBuild(tx, b.id, { state: "failed", failure_reason: reason, finished_at: now });
      if (done) await announceBuildEnd(tx, done, failed ?? image, now);
    });
    this.#logSince.delete(b.id);
    this.#log.info({ build: b.id, reason }, "build failed");
  }

  async #finish(b: ImageBuildRow, state: "cancelled", reason: string | null): Promise<void> {
    const now = this.#clock.now();
    await this.#db.transaction(async (tx) => {
      const done = await updateActiveBuild(tx, b.id, { state, failure_reason: reason, finished_at: now });
      const image = await findPrivateImage(tx, b.image_id);
      await deletePrivateImageRow(tx, b.image_id);
      if (done) await announceBuildEnd(tx, done, image, now);
    });
    this.#logSince.delete(b.id);
  }
}

/** Config and layers of a manifest (an index: those of its entries' manifests). */
async function blobsSize(
  target: NonNullable<ReturnType<typeof targetClient>>,
  repository: string,
  bytes: Buffer,
  mediaType: string,
): Promise<number> {
  const m = JSON.parse(bytes.toString("utf8")) as {
    config?: { size: number };
    layers?: { size: number }[];
    manifests?: { digest: string; size: number }[];
  };
  if (mediaType === MANIFEST_TYPES.ociIndex || mediaType === MANIFEST_TYPES.dockerList || m.manifests) {
    let n = 0;
    for (const d of m.manifests ?? []) {
      const child = await target.getManifest(repository, d.digest, `repository:${repository}:pull`);
      n += child.bytes.length + (await blobsSize(target, repository, child.bytes, child.mediaType));
    }
    return n;
  }
  return (m.config?.size ?? 0) + (m.layers ?? []).reduce((s, l) => s + l.size, 0);
}
