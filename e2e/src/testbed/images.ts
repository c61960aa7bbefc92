// Small real images for the bed's registries, made by the tests: tar layers, a config, a manifest (OCI
// or Docker v2), and multi-platform indexes, pushed with the registry protocol.
import { createCipheriv, createHash } from "node:crypto";
import { request } from "node:http";
import { Readable } from "node:stream";

export const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
export const OCI_INDEX = "application/vnd.oci.image.index.v1+json";
export const DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json";
export const DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json";

const sha256 = (b: Buffer) => `sha256:${createHash("sha256").update(b).digest("hex")}`;

/** A ustar archive of the files (what an image layer is, uncompressed). */
export function tarLayer(files: { name: string; content: Buffer | string }[]): Buffer {
  const parts: Buffer[] = [];
  for (const f of files) {
    const content = Buffer.isBuffer(f.content) ? f.content : Buffer.from(f.content);
    const h = Buffer.alloc(512);
    h.write(f.name, 0, 100);
    h.write("0000644\0", 100);
    h.write("0000000\0", 108);
    h.write("0000000\0", 116);
    h.write(`${content.length.toString(8).padStart(11, "0")}\0`, 124);
    h.write(
      `${Math.floor(Date.UTC(2026, 10, 1) / 1000)
        .toString(8)
        .padStart(11, "0")}\0`,
      136,
    );
    h.write("        ", 148);
    h.write("0", 156);
    h.write("ustar\0", 257);
    h.write("00", 263);
    let sum = 0;
    for (const b of h) sum += b;
    h.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
    parts.push(h, content, Buffer.alloc((512 - (content.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

/** Uploads a blob in one streamed PUT; `body` is called once. */
export async function pushBlobStream(
  registry: string,
  repository: string,
  digest: string,
  size: number,
  body: () => Readable,
): Promise<void> {
  const start = await fetch(`${registry}/v2/${repository}/blobs/uploads/`, { method: "POST" });
  const location = start.headers.get("location");
  if (start.status !== 202 || !location) throw new Error(`upload refused: ${start.status}`);
  const url = new URL(location, `${registry}/`);
  url.searchParams.set("digest", digest);
  await new Promise<void>((resolve, reject) => {
    const req = request(url, { method: "PUT", headers: { "Content-Length": String(size) } }, (res) => {
      res.resume();
      res.on("end", () =>
        res.statusCode === 201 ? resolve() : reject(new Error(`blob PUT answered ${res.statusCode}`)),
      );
    });
    req.on("error", reject);
    body().pipe(req);
  });
}

export async function pushBlob(
  registry: string,
  repository: string,
  bytes: Buffer,
): Promise<{ digest: string; size: number }> {
  const digest = sha256(bytes);
  await pushBlobStream(registry, repository, digest, bytes.length, () => Readable.from([bytes]));
  return { digest, size: bytes.length };
}

export async function pushManifest(
  registry: string,
  repository: string,
  ref: string,
  mediaType: string,
  bytes: Buffer,
) {
  const r = await fetch(`${registry}/v2/${repository}/manifests/${ref}`, {
    method: "PUT",
    headers: { "Content-Type": mediaType },
    body: new Uint8Array(bytes),
  });
  if (r.status !== 201) throw new Error(`manifest PUT answered ${r.status}: ${await r.text()}`);
  return sha256(bytes);
}

export interface BuiltImage {
  digest: string;
  manifest: Buffer;
  mediaType: string;
  /** Config and layers. */
  blobs: { digest: string; size: number }[];
  /** Manifest, config and layers, in bytes. */
  size: number;
}

/**
 * Pushes one image: the layers given (tar archives or bytes) or a streamed layer (`stream`: size and a
 * deterministic maker, called twice: once to hash, once to upload), a config naming the platform, and a
 * manifest. `tag` undefined: pushed by digest only (an index's child).
 */
export async function pushImage(
  registry: string,
  repository: string,
  tag: string | undefined,
  o: {
    layers?: Buffer[];
    stream?: { size: number; make: () => Readable }[];
    platform?: string;
    docker?: boolean;
  } = {},
): Promise<BuiltImage> {
  const [os, architecture, variant] = (o.platform ?? "linux/amd64").split("/");
  const layers: { digest: string; size: number }[] = [];
  for (const l of o.layers ?? [tarLayer([{ name: "hello.txt", content: `hello from ${repository}` }])])
    layers.push(await pushBlob(registry, repository, l));
  for (const s of o.stream ?? []) {
    const h = createHash("sha256");
    for await (const c of s.make()) h.update(c as Buffer);
    const digest = `sha256:${h.digest("hex")}`;
    await pushBlobStream(registry, repository, digest, s.size, s.make);
    layers.push({ digest, size: s.size });
  }
  const config = Buffer.from(
    JSON.stringify({
      architecture,
      os,
      ...(variant ? { variant } : {}),
      config: { Cmd: ["/bin/sh"] },
      rootfs: { type: "layers", diff_ids: layers.map((l) => l.digest) },
    }),
  );
  const cfg = await pushBlob(registry, repository, config);
  const mediaType = o.docker ? DOCKER_MANIFEST : OCI_MANIFEST;
  const layerType = o.docker
    ? "application/vnd.docker.image.rootfs.diff.tar"
    : "application/vnd.oci.image.layer.v1.tar";
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType,
      config: {
        mediaType: o.docker
          ? "application/vnd.docker.container.image.v1+json"
          : "application/vnd.oci.image.config.v1+json",
        ...cfg,
      },
      layers: layers.map((l) => ({ mediaType: layerType, ...l })),
    }),
  );
  const digest = await pushManifest(registry, repository, tag ?? sha256(manifest), mediaType, manifest);
  const blobs = [cfg, ...layers];
  return { digest, manifest, mediaType, blobs, size: manifest.length + blobs.reduce((n, b) => n + b.size, 0) };
}

/** Pushes an image per platform and an index (OCI) or manifest list (Docker) naming them under `tag`. */
export async function pushIndex(
  registry: string,
  repository: string,
  tag: string,
  platforms: string[],
  o: { docker?: boolean } = {},
): Promise<{ digest: string; children: Map<string, BuiltImage> }> {
  const children = new Map<string, BuiltImage>();
  for (const p of platforms)
    children.set(
      p,
      await pushImage(registry, repository, undefined, {
        platform: p,
        layers: [tarLayer([{ name: "platform.txt", content: `${repository} for ${p}` }])],
        ...(o.docker ? { docker: true } : {}),
      }),
    );
  const mediaType = o.docker ? DOCKER_LIST : OCI_INDEX;
  const index = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType,
      manifests: [...children].map(([p, c]) => {
        const [os, architecture, variant] = p.split("/");
        return {
          mediaType: c.mediaType,
          digest: c.digest,
          size: c.manifest.length,
          platform: { os, architecture, ...(variant ? { variant } : {}) },
        };
      }),
    }),
  );
  return { digest: await pushManifest(registry, repository, tag, mediaType, index), children };
}

/** `size` deterministic pseudo-random bytes from `seed` (AES-CTR over zeros: fast, incompressible). */
export function pseudoRandomStream(size: number, seed: string): Readable {
  const key = createHash("sha256").update(seed).digest();
  const cipher = createCipheriv("aes-256-ctr", key, Buffer.alloc(16));
  const chunk = Buffer.alloc(1024 * 1024);
  let left = size;
  return new Readable({
    read() {
      if (left <= 0) return this.push(null);
      const n = Math.min(left, chunk.length);
      left -= n;
      this.push(cipher.update(n === chunk.length ? chunk : chunk.subarray(0, n)));
    },
  });
}
