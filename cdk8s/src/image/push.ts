// Pushes the OCI image layout build.ts writes to a registry over the distribution API, with nothing but
// Node: no Docker daemon, no crane or skopeo. Blobs the registry already has are skipped (HEAD), the
// others uploaded in one PUT each; the manifest goes last, under the tag. Anonymous or a bearer token
// (BERTH_REGISTRY_TOKEN); http only when asked (`--plain-http`, a loopback registry such as the bed's).
//   node cdk8s/src/image/push.ts <oci-dir> <host[:port]/repository:tag> [--plain-http]
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

export interface ImageRef {
  host: string;
  repository: string;
  tag: string;
}

/** `host[:port]/repository[:tag]`; the host must be named (no implicit Docker Hub). */
export function parseRef(ref: string): ImageRef {
  const m =
    /^([A-Za-z0-9.-]+(?::\d+)?)\/([a-z0-9]+(?:[._/-][a-z0-9]+)*)(?::([A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?$/.exec(ref);
  if (!m) throw new Error(`"${ref}" is not an image reference such as registry.example.com/berth/berth:0.1.0`);
  return { host: m[1] as string, repository: m[2] as string, tag: m[3] ?? "latest" };
}

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
}

const sha = (b: Buffer) => `sha256:${createHash("sha256").update(b).digest("hex")}`;

export interface PushResult {
  /** The manifest's digest: `<host>/<repository>@<digest>` pulls exactly this image. */
  digest: string;
  /** Blobs uploaded, and blobs the registry already had. */
  uploaded: number;
  skipped: number;
}

export async function pushLayout(
  dir: string,
  ref: ImageRef,
  opts: { plainHttp?: boolean; token?: string } = {},
): Promise<PushResult> {
  const base = `${opts.plainHttp ? "http" : "https"}://${ref.host}/v2/${ref.repository}`;
  const auth: Record<string, string> = opts.token ? { authorization: `Bearer ${opts.token}` } : {};
  const index = JSON.parse(readFileSync(join(dir, "index.json"), "utf8")) as { manifests: Descriptor[] };
  const top = index.manifests[0];
  if (!top) throw new Error(`${dir}/index.json names no manifest`);
  // One image, as build.ts writes: pushing the first of several (or an index's children unpushed) would
  // tag an image other than the one asked for, without a word.
  if (index.manifests.length > 1 || !/\.manifest\.v[12]\+json$/.test(top.mediaType))
    throw new Error(
      `${dir}/index.json names ${index.manifests.length} manifest(s), the first a ${top.mediaType}: only a layout of one image manifest is pushed (as cdk8s/src/image/build.ts writes)`,
    );
  const blob = (digest: string) => readFileSync(join(dir, "blobs/sha256", digest.slice("sha256:".length)));
  const manifest = blob(top.digest);
  if (sha(manifest) !== top.digest) throw new Error(`${dir}: the manifest's bytes do not match ${top.digest}`);
  const parsed = JSON.parse(manifest.toString()) as { config: Descriptor; layers: Descriptor[] };
  let uploaded = 0;
  let skipped = 0;
  for (const d of [parsed.config, ...parsed.layers]) {
    const head = await fetch(`${base}/blobs/${d.digest}`, { method: "HEAD", headers: auth });
    if (head.status === 200) {
      skipped++;
      continue;
    }
    const bytes = blob(d.digest);
    if (sha(bytes) !== d.digest) throw new Error(`${dir}: blob ${d.digest} does not match its digest`);
    const start = await fetch(`${base}/blobs/uploads/`, { method: "POST", headers: auth });
    const location = start.headers.get("location");
    if (start.status !== 202 || !location)
      throw new Error(`${ref.host} refused an upload to ${ref.repository}: ${start.status} ${await start.text()}`);
    const url = new URL(location, base);
    url.searchParams.set("digest", d.digest);
    const put = await fetch(url, {
      method: "PUT",
      headers: { ...auth, "content-type": "application/octet-stream", "content-length": String(bytes.length) },
      body: new Uint8Array(bytes),
    });
    if (put.status !== 201) throw new Error(`uploading ${d.digest}: ${put.status} ${await put.text()}`);
    uploaded++;
  }
  const put = await fetch(`${base}/manifests/${ref.tag}`, {
    method: "PUT",
    headers: { ...auth, "content-type": top.mediaType },
    body: new Uint8Array(manifest),
  });
  if (put.status !== 201) throw new Error(`the manifest under ${ref.tag}: ${put.status} ${await put.text()}`);
  const answered = put.headers.get("docker-content-digest");
  if (answered && answered !== top.digest)
    throw new Error(`${ref.host} stored the manifest as ${answered}, not ${top.digest}`);
  return { digest: top.digest, uploaded, skipped };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { "plain-http": { type: "boolean", default: false } },
  });
  const [dir, refText] = positionals;
  if (!dir || !refText)
    throw new Error("usage: node cdk8s/src/image/push.ts <oci-dir> <host[:port]/repository:tag> [--plain-http]");
  const ref = parseRef(refText);
  const started = performance.now();
  const r = await pushLayout(dir, ref, {
    plainHttp: values["plain-http"],
    ...(process.env.BERTH_REGISTRY_TOKEN ? { token: process.env.BERTH_REGISTRY_TOKEN } : {}),
  });
  console.log(
    `${ref.host}/${ref.repository}@${r.digest} (${ref.tag}): ${r.uploaded} blobs uploaded, ${r.skipped} already there, ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
}
