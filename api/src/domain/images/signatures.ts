// Image signatures in the layout cosign writes and reads with `--key` (so `cosign verify --key` accepts what
// Berth signs, and Berth accepts what a platform team signed with cosign): beside the image, in the same
// repository, a manifest tagged `sha256-<hex>.sig` whose layers are small JSON payloads naming the signed
// digest, each with its signature (base64 DER, ECDSA P-256 with SHA-256, or Ed25519) in an annotation.
//
// A signature covers one manifest digest, never a tag: callers check an image by digest.

import { createHash, createPublicKey, type KeyObject, sign, verify } from "node:crypto";
import { Readable } from "node:stream";
import { MANIFEST_TYPES, type RegistryClient, RegistryError } from "./registry.ts";

export const PAYLOAD_TYPE = "application/vnd.dev.cosign.simplesigning.v1+json";
export const SIGNATURE_ANNOTATION = "dev.cosignproject.cosign/signature";
const CONFIG_TYPE = "application/vnd.oci.image.config.v1+json";
const PAYLOAD_KIND = "cosign container image signature";
/** A payload is a few hundred bytes; a larger layer is not one of ours to read. */
const MAX_PAYLOAD_BYTES = 64 * 1024;
/** A signature manifest may carry several signatures (several keys, re-signing); we read at most these. */
const MAX_SIGNATURES = 16;

export interface TrustedKey {
  name: string;
  key: KeyObject;
}

export type SignatureVerdict =
  | { ok: true; key: string }
  | { ok: false; reason: "unsigned" | "untrusted" | "invalid"; message: string };

/** The tag cosign gives the signatures of a digest. */
export function signatureTag(digest: string): string {
  return `${digest.replace(":", "-")}.sig`;
}

/** Parses a PEM public key Berth can verify with: ECDSA P-256 or Ed25519. Throws with a reason otherwise. */
export function parsePublicKey(pem: string): KeyObject {
  const key = createPublicKey(pem);
  const t = key.asymmetricKeyType;
  if (t === "ed25519") return key;
  if (t === "ec" && key.asymmetricKeyDetails?.namedCurve === "prime256v1") return key;
  const kind = t === "ec" ? `an EC key on ${key.asymmetricKeyDetails?.namedCurve}` : `a key of type ${t}`;
  throw new Error(`${kind}; Berth verifies ECDSA P-256 or Ed25519`);
}

function payloadOf(dockerReference: string, digest: string): Buffer {
  return Buffer.from(
    JSON.stringify({
      critical: {
        identity: { "docker-reference": dockerReference },
        image: { "docker-manifest-digest": digest },
        type: PAYLOAD_KIND,
      },
      optional: null,
    }),
  );
}

const sha256 = (b: Buffer) => `sha256:${createHash("sha256").update(b).digest("hex")}`;
const algorithmOf = (key: KeyObject) => (key.asymmetricKeyType === "ed25519" ? null : "sha256");

interface Layer {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
}

/** A registry's bytes as a JSON object, or undefined: what a registry sends is not trusted to be either. */
function jsonObject(bytes: Buffer): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(bytes.toString("utf8"));
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function isLayer(l: unknown): l is Layer {
  const o = l as Partial<Layer> | null;
  return (
    o !== null &&
    typeof o === "object" &&
    typeof o.mediaType === "string" &&
    typeof o.digest === "string" &&
    typeof o.size === "number"
  );
}

async function readSmallBlob(client: RegistryClient, repository: string, layer: Layer): Promise<Buffer | undefined> {
  if (layer.size > MAX_PAYLOAD_BYTES) return undefined;
  const ac = new AbortController();
  let stream: ReadableStream<Uint8Array>;
  try {
    stream = await client.blob(repository, layer.digest, ac.signal);
  } catch (e) {
    // A signature whose payload is gone (collected, or never pushed) signs nothing; waiting will not help.
    if (e instanceof RegistryError && e.kind === "not_found") return undefined;
    throw e;
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const c of stream) {
    total += c.byteLength;
    if (total > MAX_PAYLOAD_BYTES) {
      ac.abort();
      return undefined;
    }
    chunks.push(Buffer.from(c));
  }
  const bytes = Buffer.concat(chunks);
  return sha256(bytes) === layer.digest ? bytes : undefined;
}

async function signatureLayers(client: RegistryClient, repository: string, digest: string): Promise<Layer[]> {
  try {
    const m = await client.getManifest(repository, signatureTag(digest));
    const layers = jsonObject(m.bytes)?.layers;
    return Array.isArray(layers) ? layers.filter(isLayer) : [];
  } catch (e) {
    if (e instanceof RegistryError && e.kind === "not_found") return [];
    throw e;
  }
}

/**
 * Whether `repository@digest` carries a signature by one of `keys`. Unreachable registries throw
 * (RegistryError): the caller decides, and never reads that as "signed".
 */
export async function verifyImageSignature(
  client: RegistryClient,
  repository: string,
  digest: string,
  keys: readonly TrustedKey[],
): Promise<SignatureVerdict> {
  const layers = (await signatureLayers(client, repository, digest))
    .filter((l) => l.mediaType === PAYLOAD_TYPE && typeof l.annotations?.[SIGNATURE_ANNOTATION] === "string")
    .slice(0, MAX_SIGNATURES);
  if (layers.length === 0)
    return { ok: false, reason: "unsigned", message: `${repository}@${digest} has no signature` };
  let coversOther = false;
  for (const layer of layers) {
    const payload = await readSmallBlob(client, repository, layer);
    if (!payload) continue;
    const claims = jsonObject(payload) as
      | { critical?: { image?: Record<string, unknown>; type?: unknown } }
      | undefined;
    if (!claims) continue;
    if (claims.critical?.type !== PAYLOAD_KIND || claims.critical.image?.["docker-manifest-digest"] !== digest) {
      coversOther = true;
      continue;
    }
    const signature = Buffer.from(layer.annotations?.[SIGNATURE_ANNOTATION] ?? "", "base64");
    for (const k of keys) if (verify(algorithmOf(k.key), payload, k.key, signature)) return { ok: true, key: k.name };
  }
  return coversOther
    ? { ok: false, reason: "invalid", message: `a signature of ${repository}@${digest} names another digest` }
    : { ok: false, reason: "untrusted", message: `${repository}@${digest} is signed, but by no trusted key` };
}

/**
 * Signs `repository@digest` with `privateKey` and pushes the signature beside it, keeping signatures that
 * are there already (another key's, an earlier one's).
 */
export async function signImage(
  client: RegistryClient,
  repository: string,
  digest: string,
  dockerReference: string,
  privateKey: KeyObject,
): Promise<void> {
  const payload = payloadOf(dockerReference, digest);
  const signature = sign(privateKey.asymmetricKeyType === "ed25519" ? null : "sha256", payload, privateKey);
  const layer: Layer = {
    mediaType: PAYLOAD_TYPE,
    digest: sha256(payload),
    size: payload.length,
    annotations: { [SIGNATURE_ANNOTATION]: signature.toString("base64") },
  };
  // Every key signs the same payload, so layers share a digest and differ by their signature.
  const kept = (await signatureLayers(client, repository, digest)).filter(
    (l) => l.annotations?.[SIGNATURE_ANNOTATION] !== layer.annotations?.[SIGNATURE_ANNOTATION],
  );
  const layers = [...kept, layer];
  const config = Buffer.from(
    JSON.stringify({
      architecture: "",
      os: "",
      config: {},
      rootfs: { type: "layers", diff_ids: layers.map((l) => l.digest) },
    }),
  );
  for (const [digestOf, bytes] of [
    [layer.digest, payload],
    [sha256(config), config],
  ] as const)
    if (!(await client.hasBlob(repository, digestOf, `repository:${repository}:pull,push`)))
      await client.pushBlob(repository, digestOf, bytes.length, Readable.from([bytes]));
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MANIFEST_TYPES.ociManifest,
      config: { mediaType: CONFIG_TYPE, digest: sha256(config), size: config.length },
      layers,
    }),
  );
  await client.putManifest(repository, signatureTag(digest), MANIFEST_TYPES.ociManifest, manifest);
}
