// Single-layer OCI images made from a few files (a static program and nothing else): packed as an OCI
// archive for `ctr images import` (the pause image, which must be there before any pull), or pushed to
// one of the bed's registries for the real node's kubelet to pull. No Docker, no builder: a tar layer,
// a config naming the entrypoint, a manifest.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { OCI_MANIFEST, pushBlob, pushManifest } from "../images.ts";

export interface ImageFile {
  /** Path inside the image, without a leading slash ("pause", "bin/app"). */
  path: string;
  /** Bytes, or the host file to read them from. */
  content: Buffer | string;
  /** Default 0o755: these images are programs. */
  mode?: number;
}

export interface FileImage {
  files: ImageFile[];
  entrypoint: string[];
  cmd?: string[];
  env?: string[];
}

const sha256 = (b: Buffer) => `sha256:${createHash("sha256").update(b).digest("hex")}`;
const OCI_LAYER = "application/vnd.oci.image.layer.v1.tar";
const OCI_CONFIG = "application/vnd.oci.image.config.v1+json";
const MTIME = Math.floor(Date.UTC(2026, 10, 1) / 1000);

/** A ustar archive; regular files only, with their modes (parents are made by the runtime). */
export function tarOf(entries: { name: string; content: Buffer; mode: number }[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const h = Buffer.alloc(512);
    h.write(e.name, 0, 100);
    h.write(`${e.mode.toString(8).padStart(7, "0")}\0`, 100);
    h.write("0000000\0", 108);
    h.write("0000000\0", 116);
    h.write(`${e.content.length.toString(8).padStart(11, "0")}\0`, 124);
    h.write(`${MTIME.toString(8).padStart(11, "0")}\0`, 136);
    h.write("        ", 148);
    h.write("0", 156);
    h.write("ustar\0", 257);
    h.write("00", 263);
    let sum = 0;
    for (const b of h) sum += b;
    h.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
    parts.push(h, e.content, Buffer.alloc((512 - (e.content.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

interface Blobs {
  layer: Buffer;
  config: Buffer;
  manifest: Buffer;
}

function blobsOf(image: FileImage): Blobs {
  const layer = tarOf(
    image.files.map((f) => ({
      name: f.path.replace(/^\/+/, ""),
      content: Buffer.isBuffer(f.content) ? f.content : readFileSync(f.content),
      mode: f.mode ?? 0o755,
    })),
  );
  const config = Buffer.from(
    JSON.stringify({
      architecture: "amd64",
      os: "linux",
      config: {
        Entrypoint: image.entrypoint,
        ...(image.cmd ? { Cmd: image.cmd } : {}),
        Env: image.env ?? ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
      },
      rootfs: { type: "layers", diff_ids: [sha256(layer)] },
    }),
  );
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: { mediaType: OCI_CONFIG, digest: sha256(config), size: config.length },
      layers: [{ mediaType: OCI_LAYER, digest: sha256(layer), size: layer.length }],
    }),
  );
  return { layer, config, manifest };
}

/** An OCI image layout as one tar archive, its image named `ref` (what `ctr images import` records). */
export function ociArchive(ref: string, image: FileImage): Buffer {
  const { layer, config, manifest } = blobsOf(image);
  const tag = ref.slice(ref.lastIndexOf(":") + 1);
  const index = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.index.v1+json",
      manifests: [
        {
          mediaType: OCI_MANIFEST,
          digest: sha256(manifest),
          size: manifest.length,
          annotations: { "io.containerd.image.name": ref, "org.opencontainers.image.ref.name": tag },
          platform: { architecture: "amd64", os: "linux" },
        },
      ],
    }),
  );
  const blob = (b: Buffer) => ({ name: `blobs/sha256/${sha256(b).slice(7)}`, content: b, mode: 0o644 });
  return tarOf([
    { name: "oci-layout", content: Buffer.from('{"imageLayoutVersion":"1.0.0"}'), mode: 0o644 },
    { name: "index.json", content: index, mode: 0o644 },
    blob(layer),
    blob(config),
    blob(manifest),
  ]);
}

/**
 * Pushes the image to a bed registry (`http://127.0.0.1:<port>`) as `<repository>:<tag>` and returns
 * the reference a pod names (`127.0.0.1:<port>/<repository>:<tag>`) and its manifest digest. The real
 * node pulls it over plain HTTP once the registry is among its registries.
 */
export async function pushFileImage(
  registryUrl: string,
  repository: string,
  tag: string,
  image: FileImage,
): Promise<{ ref: string; digest: string; size: number }> {
  const { layer, config, manifest } = blobsOf(image);
  await pushBlob(registryUrl, repository, layer);
  await pushBlob(registryUrl, repository, config);
  const digest = await pushManifest(registryUrl, repository, tag, OCI_MANIFEST, manifest);
  return {
    ref: `${new URL(registryUrl).host}/${repository}:${tag}`,
    digest,
    size: layer.length + config.length + manifest.length,
  };
}
