// Whether an image may be used while signatures are required (settings `image_signatures`): its reference
// names a digest (a tag can move after the check; a signature covers one digest), and that digest carries a
// signature by a trusted key — one an administrator listed, or Berth's own (BERTH_IMAGE_SIGNING_KEY_FILE).
// Checked when a session is created, when an administrator adds or changes a catalog image, and by the
// worker before an import is copied. Nothing is cached: each check reads the registry (two small requests).

import type { Knex } from "knex";
import type { ImagesConfig } from "../../config.ts";
import { DomainError, NotFound, Unavailable } from "../../errors.ts";
import { readSystemSettings } from "../settings/settings.ts";
import { BadReference, parseReference } from "./reference.ts";
import { RegistryError } from "./registry.ts";
import { parsePublicKey, type SignatureVerdict, type TrustedKey, verifyImageSignature } from "./signatures.ts";
import { sourceClient, sourceRefusal, targetClient } from "./sources.ts";

/** The name Berth's own key goes by in verdicts and messages. */
export const BERTH_KEY_NAME = "berth";

export type UnsignedReason = "not_pinned" | "unsigned" | "untrusted" | "invalid";

interface TrustDeps {
  db: Knex;
  config: { images?: ImagesConfig | undefined };
}

/** The keys signatures are checked against, or undefined when signatures are not required. */
export async function requiredKeys(deps: TrustDeps): Promise<TrustedKey[] | undefined> {
  const s = (await readSystemSettings(deps.db)).image_signatures;
  if (!s.required) return undefined;
  const own = deps.config.images?.signingKey;
  return [
    ...(own ? [{ name: BERTH_KEY_NAME, key: own.publicKey }] : []),
    ...s.keys.map((k) => ({ name: k.name, key: parsePublicKey(k.public_key) })),
  ];
}

function refusal(reference: string, reason: UnsignedReason, message: string, field?: string): DomainError {
  return new DomainError("image_unsigned", message, { reference, reason, ...(field ? { field } : {}) });
}

/**
 * Checks `reference` against `keys`: the refusal to answer, or undefined when it is signed. A registry that
 * cannot be asked answers 503 (try again), never "signed".
 */
export async function unsignedRefusal(
  config: ImagesConfig | undefined,
  reference: string,
  keys: readonly TrustedKey[],
  field?: string,
): Promise<DomainError | undefined> {
  let ref: ReturnType<typeof parseReference>;
  try {
    ref = parseReference(reference);
  } catch (e) {
    if (e instanceof BadReference)
      return refusal(reference, "not_pinned", `${reference} is not a reference Berth can check: ${e.message}`, field);
    throw e;
  }
  if (!ref.digest)
    return refusal(
      reference,
      "not_pinned",
      `${reference} names a tag; with signatures required an image is named by digest (…@sha256:…), since a tag can move after the check`,
      field,
    );
  const own = config?.registry;
  const ownPrefix = own ? `${own.pullPrefix}/` : undefined;
  const inOwn = ownPrefix !== undefined && `${ref.registry}/${ref.repository}`.startsWith(ownPrefix);
  const repository = inOwn && ownPrefix ? `${ref.registry}/${ref.repository}`.slice(ownPrefix.length) : ref.repository;
  if (!inOwn && config) {
    const refused = await sourceRefusal(config, ref.registry);
    if (refused)
      return refusal(
        reference,
        "unsigned",
        `Berth does not read signatures from internal addresses: ${refused}`,
        field,
      );
  }
  const client = inOwn && config ? targetClient(config) : config ? sourceClient(config, ref.registry) : undefined;
  if (!client) throw new Unavailable("checking image signatures needs the images configuration");
  let verdict: SignatureVerdict;
  try {
    verdict = await verifyImageSignature(client, repository, ref.digest, keys);
  } catch (e) {
    if (e instanceof RegistryError)
      throw new Unavailable(
        `the signature of ${reference} could not be read: ${e.message}`,
        { reference },
        { "Retry-After": "30" },
      );
    throw e;
  }
  if (verdict.ok) return undefined;
  const trusted = keys.map((k) => k.name);
  return refusal(
    reference,
    verdict.reason,
    verdict.reason === "untrusted"
      ? `${reference} is signed, but by none of the trusted keys (${trusted.join(", ") || "none is configured"})`
      : verdict.reason === "unsigned"
        ? `${reference} is not signed; signatures are required (ask an administrator, or sign it with a trusted key)`
        : verdict.message,
    field,
  );
}

/** Berth's public key as verifiers take it; 404 when none is configured. */
export function imageSigningKey(deps: Pick<TrustDeps, "config">): {
  algorithm: "ecdsa-p256-sha256" | "ed25519";
  public_key: string;
  name: string;
} {
  const k = deps.config.images?.signingKey;
  if (!k) throw new NotFound("signing key", undefined, { reason: "BERTH_IMAGE_SIGNING_KEY_FILE is not set" });
  return {
    algorithm: k.publicKey.asymmetricKeyType === "ed25519" ? "ed25519" : "ecdsa-p256-sha256",
    public_key: k.publicKey.export({ type: "spki", format: "pem" }).toString(),
    name: BERTH_KEY_NAME,
  };
}

/** Throws the refusal when signatures are required and `reference` is not signed by a trusted key. */
export async function assertSigned(deps: TrustDeps, reference: string, field?: string): Promise<void> {
  const keys = await requiredKeys(deps);
  if (!keys) return;
  const refused = await unsignedRefusal(deps.config.images, reference, keys, field);
  if (refused) throw refused;
}
