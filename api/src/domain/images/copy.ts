// Copies one image between registries by the distribution protocol: resolve the reference (an index or a
// manifest list picks the platform the fleet runs), refuse what is too large before copying a byte, copy
// the blobs the target lacks a few at a time, each streamed through a SHA-256 and a byte count (memory
// stays flat whatever the size), then push the manifest, so the image is visible only once whole.

import { createHash } from "node:crypto";
import { Readable, Transform } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { DIGEST } from "./reference.ts";
import { MANIFEST_TYPES, type RegistryClient, RegistryError } from "./registry.ts";

export type ImportFailureCode =
  | "not_found"
  | "unauthorized"
  | "too_large"
  | "no_matching_platform"
  | "unreachable"
  | "digest_mismatch"
  | "unsupported_manifest"
  | "registry_error"
  | "unsigned"
  | "cancelled";

/** Why an import failed, in words for the person who asked; `retryable` ones are tried again. */
export class ImportFailure extends Error {
  readonly code: ImportFailureCode;
  constructor(code: ImportFailureCode, message: string) {
    super(message);
    this.code = code;
  }
  get retryable(): boolean {
    return this.code === "unreachable" || this.code === "registry_error";
  }
}

interface Descriptor {
  mediaType?: string;
  digest: string;
  size: number;
  platform?: { os?: string; architecture?: string; variant?: string };
}

export interface CopyRequest {
  source: RegistryClient;
  sourceRepository: string;
  /** Tag or digest. */
  sourceRef: string;
  target: RegistryClient;
  targetRepository: string;
  targetTag: string;
  /** os/architecture[/variant] in order of preference, e.g. ["linux/amd64"]. */
  platforms: readonly string[];
  maxBytes: number;
  /** Blobs copied at once; default 3. */
  concurrency?: number;
  /** A blob stream silent for this long is given up (the registry stopped answering); default 30 s. */
  idleTimeoutMs?: number;
  /** Called as bytes move: copied so far, total (set once the manifest is read). */
  onProgress?: (copied: number, total: number) => void;
  signal?: AbortSignal;
}

export interface CopyResult {
  digest: string;
  /** Manifest, config and layers, in bytes. */
  size: number;
  mediaType: string;
  /** Blobs the target already had. */
  skipped: number;
  copied: number;
}

const sha256 = (b: Buffer) => `sha256:${createHash("sha256").update(b).digest("hex")}`;

function asFailure(e: unknown): ImportFailure {
  if (e instanceof ImportFailure) return e;
  if (e instanceof RegistryError) {
    const code = e.kind === "protocol" ? "registry_error" : e.kind;
    return new ImportFailure(code, e.message);
  }
  return new ImportFailure("registry_error", (e as Error)?.message ?? String(e));
}

function parseJson(bytes: Buffer, what: string): Record<string, unknown> {
  try {
    return JSON.parse(bytes.toString("utf8")) as Record<string, unknown>;
  } catch {
    throw new ImportFailure("unsupported_manifest", `${what} is not JSON`);
  }
}

const isIndex = (t: string) => t === MANIFEST_TYPES.ociIndex || t === MANIFEST_TYPES.dockerList;
const isManifest = (t: string) => t === MANIFEST_TYPES.ociManifest || t === MANIFEST_TYPES.dockerManifest;

function descriptor(d: unknown, what: string): Descriptor {
  const o = d as Partial<Descriptor> | undefined;
  if (!o || typeof o.digest !== "string" || !DIGEST.test(o.digest) || typeof o.size !== "number" || o.size < 0)
    throw new ImportFailure("unsupported_manifest", `${what} has a descriptor without a sha256 digest and a size`);
  return o as Descriptor;
}

const platformOf = (p: Descriptor["platform"]) =>
  `${p?.os ?? "?"}/${p?.architecture ?? "?"}${p?.variant ? `/${p.variant}` : ""}`;

/** The index entry for the first wanted platform (a wanted one without variant takes any variant). */
export function pickPlatform(entries: Descriptor[], wanted: readonly string[]): Descriptor | undefined {
  for (const w of wanted) {
    const [os, arch, variant] = w.split("/");
    const hit = entries.find(
      (e) =>
        e.platform?.os === os &&
        e.platform?.architecture === arch &&
        (variant === undefined || e.platform?.variant === variant),
    );
    if (hit) return hit;
  }
  return undefined;
}

async function resolve(req: CopyRequest): Promise<{ mediaType: string; bytes: Buffer; digest: string }> {
  const what = `${req.sourceRepository}${req.sourceRef.startsWith("sha256:") ? "@" : ":"}${req.sourceRef}`;
  const top = await req.source.getManifest(req.sourceRepository, req.sourceRef);
  if (req.sourceRef.startsWith("sha256:") && sha256(top.bytes) !== req.sourceRef)
    throw new ImportFailure("digest_mismatch", `the registry's manifest for ${what} does not have that digest`);
  const mediaType = top.mediaType || String(parseJson(top.bytes, "the manifest").mediaType ?? "");
  if (isManifest(mediaType)) return { mediaType, bytes: top.bytes, digest: sha256(top.bytes) };
  if (!isIndex(mediaType))
    throw new ImportFailure(
      "unsupported_manifest",
      `${what} is a ${mediaType || "manifest of no known type"}; Berth copies OCI and Docker v2 images`,
    );
  const index = parseJson(top.bytes, "the index");
  const entries = ((index.manifests as unknown[]) ?? []).map((d) => descriptor(d, "the index"));
  const chosen = pickPlatform(entries, req.platforms);
  if (!chosen)
    throw new ImportFailure(
      "no_matching_platform",
      `${what} has no image for ${req.platforms.join(" or ")} (it has ${entries.map((e) => platformOf(e.platform)).join(", ") || "none"})`,
    );
  const m = await req.source.getManifest(req.sourceRepository, chosen.digest);
  if (sha256(m.bytes) !== chosen.digest)
    throw new ImportFailure(
      "digest_mismatch",
      `the manifest for ${platformOf(chosen.platform)} does not have the digest the index names`,
    );
  const t = m.mediaType || String(parseJson(m.bytes, "the manifest").mediaType ?? "");
  if (!isManifest(t))
    throw new ImportFailure("unsupported_manifest", `the ${platformOf(chosen.platform)} entry is a ${t}`);
  return { mediaType: t, bytes: m.bytes, digest: chosen.digest };
}

export async function copyImage(req: CopyRequest): Promise<CopyResult> {
  try {
    return await copy(req);
  } catch (e) {
    if (req.signal?.aborted) throw new ImportFailure("cancelled", "the import was cancelled");
    throw asFailure(e);
  }
}

async function copy(req: CopyRequest): Promise<CopyResult> {
  const manifest = await resolve(req);
  const body = parseJson(manifest.bytes, "the manifest");
  const blobs = [
    descriptor(body.config, "the manifest"),
    ...((body.layers as unknown[]) ?? []).map((d) => descriptor(d, "the manifest")),
  ];
  const unique = [...new Map(blobs.map((b) => [b.digest, b])).values()];
  const total = manifest.bytes.length + unique.reduce((n, b) => n + b.size, 0);
  if (total > req.maxBytes)
    throw new ImportFailure(
      "too_large",
      `the image is ${formatBytes(total)}, more than the ${formatBytes(req.maxBytes)} an image may be`,
    );
  let copied = 0;
  const progress = (n: number) => {
    copied += n;
    req.onProgress?.(copied, total);
  };
  progress(0);
  let skipped = 0;
  let moved = 0;
  const queue = [...unique];
  const worker = async () => {
    for (let b = queue.shift(); b; b = queue.shift()) {
      req.signal?.throwIfAborted();
      if (await req.target.hasBlob(req.targetRepository, b.digest, `repository:${req.targetRepository}:pull,push`)) {
        skipped++;
        progress(b.size);
        continue;
      }
      await copyBlob(req, b, progress);
      moved++;
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, req.concurrency ?? 3) }, worker));
  req.signal?.throwIfAborted();
  const given = await req.target.putManifest(req.targetRepository, req.targetTag, manifest.mediaType, manifest.bytes);
  if (given && given !== manifest.digest)
    throw new ImportFailure(
      "registry_error",
      `Berth's registry stored the manifest under ${given}, not ${manifest.digest}`,
    );
  progress(manifest.bytes.length);
  return { digest: manifest.digest, size: total, mediaType: manifest.mediaType, skipped, copied: moved };
}

async function copyBlob(req: CopyRequest, b: Descriptor, progress: (n: number) => void): Promise<void> {
  // A cancel that came while the target was asked for this blob fired before the listener below: without
  // this the blob was still copied to its end (or its idle timeout), and the stop waited on it.
  req.signal?.throwIfAborted();
  const abort = new AbortController();
  const onOuter = () => abort.abort();
  req.signal?.addEventListener("abort", onOuter, { once: true });
  const idleMs = req.idleTimeoutMs ?? 30_000;
  let stalled = false;
  let idle: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(idle);
    idle = setTimeout(() => {
      stalled = true;
      abort.abort();
    }, idleMs);
  };
  let mismatch: ImportFailure | undefined;
  let sent = 0;
  try {
    arm();
    const web = await req.source.blob(req.sourceRepository, b.digest, abort.signal);
    const hash = createHash("sha256");
    let n = 0;
    // The last chunk is held back until the digest is checked: the upload cannot complete (and the
    // blob become visible) with bytes that do not match.
    let held: Buffer | undefined;
    const verify = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        arm();
        n += chunk.length;
        if (n > b.size) {
          mismatch = new ImportFailure(
            "digest_mismatch",
            `the blob ${b.digest} is longer than the ${b.size} bytes its manifest says`,
          );
          return cb(mismatch);
        }
        hash.update(chunk);
        sent += chunk.length;
        progress(chunk.length);
        const out = held;
        held = chunk;
        cb(null, out);
      },
      flush(cb) {
        const got = `sha256:${hash.digest("hex")}`;
        if (n !== b.size || got !== b.digest) {
          mismatch = new ImportFailure(
            "digest_mismatch",
            `the blob ${b.digest} arrived with the digest ${got} (${n} of ${b.size} bytes): the registry sent something else; nothing was kept`,
          );
          return cb(mismatch);
        }
        cb(null, held);
      },
    });
    // A small blob can fail its check before the upload has started to read it: the upload then
    // answers with that error (registry.ts), and nothing listens here meanwhile.
    verify.on("error", () => {});
    const src = Readable.fromWeb(web as WebReadableStream<Uint8Array>);
    src.on("error", (e) => verify.destroy(e));
    src.pipe(verify);
    await req.target.pushBlob(req.targetRepository, b.digest, b.size, verify);
  } catch (e) {
    progress(-sent);
    if (mismatch) throw mismatch;
    if (stalled)
      throw new ImportFailure(
        "unreachable",
        `the source registry stopped sending ${b.digest} for ${Math.round(idleMs / 1000)} s`,
      );
    throw e;
  } finally {
    clearTimeout(idle);
    req.signal?.removeEventListener("abort", onOuter);
  }
}

export function formatBytes(n: number): string {
  const units = ["bytes", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${n} bytes` : `${v.toFixed(1)} ${units[i]}`;
}
