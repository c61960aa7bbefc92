// Image builds, a leader-only loop of the worker. Each pass looks at every build in flight: writes the
// ImageBuild resource of a new one to its build cluster (through that cluster's registered credential;
// the cluster's operator runs the Job, controllers/src/builds/, and reports through /internal into the
// build's row); deletes the resource of a cancelled build (the operator deletes the Job); and when the
// operator reported the Job's end, trusts the digest the build printed only as far as Berth's registry
// confirms it: the manifest must be there under that digest, else the build fails. Success publishes the
// private Image resource and marks the image ready; failure frees the image's slot. Either way the
// resource is deleted, and with it the Job.

import { createHash } from "node:crypto";
import { type KubeApi, PeriodicPass } from "@berth/controllers/kube";
import { ImageBuildKind, ImageKind, type KindDefinition, resourcePath } from "@berth/crds";
import type { Knex } from "knex";
import type { Logger } from "pino";
import type { Clock } from "../clock.ts";
import type { ImagesConfig } from "../config.ts";
import { findBuildCluster } from "../db/operations/images/buildClusters.ts";
import { findPrivateImage } from "../db/operations/images/findPrivateImage.ts";
import { listActiveBuilds } from "../db/operations/images/listBuilds.ts";
import type { ImageBuildRow, PrivateImageRow } from "../db/operations/images/types.ts";
import { updateActiveBuild } from "../db/operations/images/updateBuild.ts";
import { deletePrivateImageRow } from "../db/operations/images/updatePrivateImage.ts";
import { createObject, getObject, kubeStatus } from "../domain/catalog/store.ts";
import { announceBuildEnd } from "../domain/images/announce.ts";
import { imageBuildResource } from "../domain/images/buildJob.ts";
import { emitImageUpdated } from "../domain/images/events.ts";
import { imageResource } from "../domain/images/privateImages.ts";
import { MANIFEST_TYPES, RegistryError } from "../domain/images/registry.ts";
import { signImage } from "../domain/images/signatures.ts";
import { targetClient } from "../domain/images/sources.ts";

export interface BuildLoopOptions {
  /** How often builds in flight are looked at; default 1 s. */
  intervalMs?: number;
  /** A build whose operator has not made its Job this long after the resource was written fails. Default 10 min. */
  pickUpTimeoutMs?: number;
}

export class BuildLoop {
  readonly #db: Knex;
  readonly #kube: KubeApi;
  readonly #config: ImagesConfig;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #clusterClient: (clusterId: string) => Promise<KubeApi>;
  readonly #pickUpTimeoutMs: number;
  readonly #loop: PeriodicPass;

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
    this.#pickUpTimeoutMs = o.pickUpTimeoutMs ?? 600_000;
    this.#loop = new PeriodicPass({
      intervalMs: o.intervalMs ?? 1000,
      pass: () => this.pass(),
      onError: (err) => this.#log.warn({ err }, "a builds pass failed; retried"),
    });
  }

  start(): void {
    this.#loop.start();
  }

  async stop(): Promise<void> {
    await this.#loop.stop();
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

  #resourcePath(b: ImageBuildRow): string {
    return resourcePath(ImageBuildKind, { namespace: this.#config.builds.namespace, name: b.job_name });
  }

  /** Deletes the build's ImageBuild (the operator deletes its Job); gone already is fine. */
  async #withdraw(kube: KubeApi, b: ImageBuildRow): Promise<void> {
    const r = await kube.request("DELETE", this.#resourcePath(b));
    if (r.status >= 300 && r.status !== 404) throw new Error(`deleting ImageBuild ${b.job_name}: ${r.status}`);
  }

  async #drive(b: ImageBuildRow): Promise<void> {
    const kube = await this.#clusterClient(b.cluster_id);
    if (b.cancel_requested) {
      await this.#withdraw(kube, b);
      await this.#finish(b, "cancelled", null);
      return;
    }
    const image = await findPrivateImage(this.#db, b.image_id);
    if (!image) {
      // Its image was deleted while building: the build has no result to make.
      await this.#withdraw(kube, b);
      const now = this.#clock.now();
      await this.#db.transaction(async (tx) => {
        const done = await updateActiveBuild(tx, b.id, { state: "cancelled", finished_at: now });
        if (done) await announceBuildEnd(tx, done, undefined, now);
      });
      return;
    }
    if (!b.dispatched_at) {
      await this.#dispatch(kube, b, image);
      return;
    }
    if (b.job_phase === "Failed") {
      await this.#fail(b, image, `the build failed: ${b.job_message ?? "its Job failed"}`);
      await this.#withdraw(kube, b);
      return;
    }
    if (b.job_phase === "Succeeded") {
      await this.#verifyAndPublish(b, image);
      await this.#withdraw(kube, b);
      return;
    }
    if (!b.job_created_at && this.#clock.now().getTime() - b.dispatched_at.getTime() > this.#pickUpTimeoutMs) {
      await this.#fail(
        b,
        image,
        `the build cluster's operator did not start the build within ${Math.round(this.#pickUpTimeoutMs / 60_000)} minutes`,
      );
      await this.#withdraw(kube, b);
    }
  }

  async #dispatch(kube: KubeApi, b: ImageBuildRow, image: PrivateImageRow): Promise<void> {
    const registry = this.#config.registry;
    if (!registry) throw new Error("Berth's registry is not configured");
    const marked = await findBuildCluster(this.#db, b.cluster_id);
    const body = imageBuildResource(this.#config.builds, {
      buildId: b.id,
      name: b.job_name,
      clusterId: b.cluster_id,
      dockerfile: b.dockerfile,
      baseReference: b.base_reference,
      destination: `${registry.pullPrefix}/${image.repository}:${image.tag}`,
      insecureRegistry: registry.url.startsWith("http:"),
      pushSecret: marked?.push_secret,
    });
    const made = await kube.request(
      "POST",
      resourcePath(ImageBuildKind, { namespace: this.#config.builds.namespace }),
      {
        body,
      },
    );
    if (made.status !== 201 && made.status !== 409)
      throw new Error(`writing the ImageBuild answered ${made.status}: ${JSON.stringify(made.body).slice(0, 300)}`);
    // Cancelled meanwhile: the resource goes again at once.
    if (!(await updateActiveBuild(this.#db, b.id, { dispatched_at: this.#clock.now() }))) await this.#withdraw(kube, b);
    else this.#log.info({ build: b.id, cluster: b.cluster_id, name: b.job_name }, "ImageBuild written");
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
    // Berth's builds carry Berth's signature (docs/dev/images.md), before anyone can run them.
    const key = this.#config.signingKey;
    const registry = this.#config.registry;
    if (key && registry)
      await signImage(target, image.repository, digest, `${registry.pullPrefix}/${image.repository}`, key.privateKey);
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
