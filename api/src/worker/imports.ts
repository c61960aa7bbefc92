// Imports, a leader-only loop of the worker: claims imports nobody holds (a crashed holder's claim runs
// out and another takes over), copies each with the registry protocol (api/src/domain/images/copy.ts),
// writes progress to the row and the event stream at most every second, and on success publishes the
// private Image resource (by digest) before marking the row ready. A retryable failure (the registry
// stopped answering) is tried again a few times, skipping the blobs that made it; then it fails with
// the reason. A row deleted meanwhile (its owner gave up) stops the copy.

import { createHash } from "node:crypto";
import { hostname } from "node:os";
import { type KubeApi, PeriodicPass } from "@berth/controllers/kube";
import { ImageKind, type KindDefinition, resourcePath } from "@berth/crds";
import type { Knex } from "knex";
import type { Logger } from "pino";
import type { Clock } from "../clock.ts";
import type { ImagesConfig } from "../config.ts";
import { claimImports } from "../db/operations/images/claimImports.ts";
import type { PrivateImageRow } from "../db/operations/images/types.ts";
import { updateClaimedImage } from "../db/operations/images/updatePrivateImage.ts";
import { createObject, getObject, kubeStatus } from "../domain/catalog/store.ts";
import { announceImportEnd } from "../domain/images/announce.ts";
import { copyImage, ImportFailure } from "../domain/images/copy.ts";
import { emitImageUpdated } from "../domain/images/events.ts";
import { imageResource } from "../domain/images/privateImages.ts";
import { formatReference, parseReference } from "../domain/images/reference.ts";
import { type RegistryClient, RegistryError } from "../domain/images/registry.ts";
import { signImage, verifyImageSignature } from "../domain/images/signatures.ts";
import { PinnedHosts, sourceClient, sourceRefusal, targetClient } from "../domain/images/sources.ts";
import { requiredKeys } from "../domain/images/trust.ts";

export interface ImportLoopOptions {
  /** Imports copied at once by this worker; default 2. */
  concurrency?: number;
  /** How often to look for new imports; default 1 s. */
  intervalMs?: number;
  /** How long a claim holds without news; default 60 s. */
  claimMs?: number;
  /** Attempts before a retryable failure is final; default 3. */
  attempts?: number;
  /** Blob streams silent this long are given up; default 30 s. */
  idleTimeoutMs?: number;
  /** Blobs copied at once per import; default 3. */
  blobConcurrency?: number;
}

export class ImportLoop {
  readonly #db: Knex;
  readonly #kube: KubeApi;
  readonly #config: ImagesConfig;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #o: Required<ImportLoopOptions>;
  readonly #identity = `${hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  readonly #running = new Map<string, { abort: AbortController; done: Promise<void> }>();
  readonly #loop: PeriodicPass;

  constructor(o: { db: Knex; kube: KubeApi; config: ImagesConfig; log: Logger; clock?: Clock } & ImportLoopOptions) {
    this.#db = o.db;
    this.#kube = o.kube;
    this.#config = o.config;
    this.#log = o.log.child({ component: "imports" });
    this.#clock = o.clock ?? { now: () => new Date() };
    this.#o = {
      concurrency: o.concurrency ?? 2,
      intervalMs: o.intervalMs ?? 1000,
      claimMs: o.claimMs ?? 60_000,
      attempts: o.attempts ?? 3,
      idleTimeoutMs: o.idleTimeoutMs ?? 30_000,
      blobConcurrency: o.blobConcurrency ?? 3,
    };
    this.#loop = new PeriodicPass({
      intervalMs: this.#o.intervalMs,
      pass: () => this.poll(),
      onError: (err) => this.#log.warn({ err }, "looking for imports failed; retried"),
    });
  }

  start(): void {
    this.#loop.start();
  }

  /** Stops claiming; imports in flight are abandoned (their claims run out and a leader takes them over). */
  async stop(): Promise<void> {
    await this.#loop.stop();
    for (const r of this.#running.values()) r.abort.abort();
    await Promise.allSettled([...this.#running.values()].map((r) => r.done));
  }

  /** Claims what there is room for and starts copying it (tests call it directly). */
  async poll(): Promise<void> {
    const free = this.#o.concurrency - this.#running.size;
    if (free <= 0) return;
    const now = this.#clock.now();
    const rows = await claimImports(this.#db, this.#identity, now, new Date(now.getTime() + this.#o.claimMs), free);
    for (const row of rows) {
      const abort = new AbortController();
      const done = this.#run(row, abort).finally(() => this.#running.delete(row.id));
      this.#running.set(row.id, { abort, done });
    }
  }

  /** Resolves when nothing is being copied (tests). */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running.values()].map((r) => r.done));
  }

  async #update(row: PrivateImageRow, changes: Partial<PrivateImageRow>): Promise<PrivateImageRow | undefined> {
    const now = this.#clock.now();
    const write = async (db: Knex) => {
      const next = await updateClaimedImage(db, row.id, this.#identity, { ...changes, updated_at: now });
      if (next) await emitImageUpdated(db, next);
      return next;
    };
    if (changes.state !== "ready" && changes.state !== "failed") return write(this.#db);
    // An end commits with its stream event and its owner's notification.
    return this.#db.transaction(async (tx) => {
      const next = await write(tx);
      if (next) await announceImportEnd(tx, next, now);
      return next;
    });
  }

  async #run(row: PrivateImageRow, abort: AbortController): Promise<void> {
    const log = this.#log.child({ image: row.id, reference: row.source_reference });
    try {
      const digest = await this.#copy(row, abort);
      if (!digest) return;
      const { name, body } = digest;
      await this.#publish(name, body);
      const ready = await this.#update(row, {
        state: "ready",
        digest: digest.digest,
        size_bytes: String(digest.size),
        bytes_copied: String(digest.size),
        bytes_total: String(digest.size),
        claimed_by: null,
        claimed_until: null,
        ready_at: this.#clock.now(),
      });
      if (!ready) {
        // Deleted while it was being published: take the resource back.
        await this.#kube.json("DELETE", imagePath(name)).catch(() => {});
        return;
      }
      log.info({ digest: digest.digest, size: digest.size }, "image imported");
    } catch (err) {
      if (abort.signal.aborted) return;
      const f = err instanceof ImportFailure ? err : new ImportFailure("registry_error", (err as Error).message);
      if (f.retryable && row.attempts < this.#o.attempts) {
        log.warn({ err: f.message, attempt: row.attempts }, "import interrupted; it is tried again");
        // Released after a pause that grows with each attempt; copied blobs are skipped next time.
        await updateClaimedImage(this.#db, row.id, this.#identity, {
          claimed_by: null,
          claimed_until: new Date(this.#clock.now().getTime() + 2000 * row.attempts),
          updated_at: this.#clock.now(),
        });
        return;
      }
      log.info({ code: f.code, reason: f.message }, "import failed");
      await this.#update(row, {
        state: "failed",
        failure_code: f.code,
        failure_reason: f.message,
        claimed_by: null,
        claimed_until: null,
      });
    }
  }

  async #copy(
    row: PrivateImageRow,
    abort: AbortController,
  ): Promise<{ digest: string; size: number; name: string; body: ReturnType<typeof imageResource> } | undefined> {
    const ref = parseReference(row.source_reference ?? "");
    // Resolved and checked once; the copy connects to these addresses only (DNS rebinding).
    const pins = new PinnedHosts(this.#config);
    try {
      return await this.#copyPinned(row, abort, ref, pins);
    } finally {
      await pins.close();
    }
  }

  async #copyPinned(
    row: PrivateImageRow,
    abort: AbortController,
    ref: ReturnType<typeof parseReference>,
    pins: PinnedHosts,
  ): Promise<{ digest: string; size: number; name: string; body: ReturnType<typeof imageResource> } | undefined> {
    const registry = this.#config.registry;
    const target = targetClient(this.#config);
    if (!registry || !target) throw new ImportFailure("registry_error", "Berth's registry is not configured");
    const refusal = await sourceRefusal(this.#config, ref.registry, undefined, pins);
    if (refusal) throw new ImportFailure("unauthorized", `Berth does not import from internal addresses: ${refusal}`);
    const source = sourceClient(this.#config, ref.registry, { pins });
    await this.#checkSource(source, ref);
    let last = 0;
    let pending: Promise<unknown> = Promise.resolve();
    const result = await copyImage({
      source,
      sourceRepository: ref.repository,
      sourceRef: ref.digest ?? ref.tag ?? "latest",
      target,
      targetRepository: row.repository,
      targetTag: row.tag,
      platforms: this.#config.platforms,
      maxBytes: this.#config.maxImageBytes,
      concurrency: this.#o.blobConcurrency,
      idleTimeoutMs: this.#o.idleTimeoutMs,
      signal: abort.signal,
      onProgress: (copied, total) => {
        const now = Date.now();
        if (now - last < 1000 && copied !== 0) return;
        last = now;
        // One write at a time; the claim is extended with each, and a row gone stops the copy.
        pending = pending.then(async () => {
          const next = await this.#update(row, {
            bytes_copied: String(Math.max(0, copied)),
            bytes_total: String(total),
            claimed_until: new Date(this.#clock.now().getTime() + this.#o.claimMs),
          });
          if (!next) abort.abort();
        });
      },
    });
    await pending;
    if (abort.signal.aborted) return undefined;
    // What Berth copied from a checked source, it vouches for with its own key (docs/dev/images.md).
    if (this.#config.signingKey)
      await signImage(
        target,
        row.repository,
        result.digest,
        `${registry.pullPrefix}/${row.repository}`,
        this.#config.signingKey.privateKey,
      );
    return { ...result, name: row.id, body: imageResource(row, registry.pullPrefix, result.digest) };
  }

  /**
   * With signatures required, the digest the member named (an index or a manifest) must be signed by a
   * trusted key in its source registry before a byte is copied.
   */
  async #checkSource(source: RegistryClient, ref: ReturnType<typeof parseReference>): Promise<void> {
    const keys = await requiredKeys({ db: this.#db, config: { images: this.#config } });
    if (!keys) return;
    let verdict: Awaited<ReturnType<typeof verifyImageSignature>>;
    try {
      let digest = ref.digest;
      if (!digest) {
        const m = await source.getManifest(ref.repository, ref.tag ?? "latest");
        digest = m.digest ?? `sha256:${createHash("sha256").update(m.bytes).digest("hex")}`;
      }
      verdict = await verifyImageSignature(source, ref.repository, digest, keys);
    } catch (e) {
      if (
        e instanceof RegistryError &&
        (e.kind === "not_found" || e.kind === "unauthorized" || e.kind === "unreachable")
      )
        throw new ImportFailure(e.kind, e.message);
      throw e;
    }
    if (!verdict.ok)
      throw new ImportFailure(
        "unsigned",
        verdict.reason === "untrusted"
          ? `${formatReference(ref)} is signed, but by none of the keys this installation trusts`
          : verdict.reason === "unsigned"
            ? `${formatReference(ref)} is not signed, and this installation runs only signed images`
            : verdict.message,
      );
  }

  /** Creates the Image resource; one already there from an earlier attempt is kept when it names the digest. */
  async #publish(name: string, body: ReturnType<typeof imageResource>): Promise<void> {
    const kind = ImageKind as unknown as KindDefinition;
    try {
      await createObject(this.#kube, kind, body);
    } catch (e) {
      if (kubeStatus(e) !== 409)
        throw new ImportFailure("registry_error", `the catalog entry could not be written: ${(e as Error).message}`);
      const existing = await getObject(this.#kube, kind, name);
      if (existing?.spec.image !== body.spec.image)
        await this.#kube.json("PUT", imagePath(name), {
          body: { ...body, metadata: { ...body.metadata, resourceVersion: existing?.metadata.resourceVersion } },
        });
    }
  }
}

const imagePath = (name: string) => resourcePath(ImageKind, { name });
