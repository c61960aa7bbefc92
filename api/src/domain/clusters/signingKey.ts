// The operator-token signing key: an RSA key pair the control plane generates on its first start and keeps
// in the management cluster's Secret `berth-system/berth-internal-signing-key`. Every API replica loads the
// same key; the private half never leaves the control plane (only the public JWK is served).
//
// Concurrency: several replicas may start at once on an empty cluster. Each generates a candidate and
// tries to create the Secret; the apiserver lets exactly one create win (409 for the rest), and the losers
// read and use the winner's key. Nobody ever overwrites an existing key.
import { createPrivateKey, createPublicKey, generateKeyPair, generateKeyPairSync, type KeyObject } from "node:crypto";
import { promisify } from "node:util";
import { type KubeApi, KubeError, seg } from "@berth/controllers/kube";
import { ANNOTATIONS, LABELS } from "@berth/crds";
import { calculateJwkThumbprint, exportJWK, type JWK } from "jose";
import type { Logger } from "pino";

export const SIGNING_KEY_NAMESPACE = "berth-system";
export const SIGNING_KEY_SECRET = "berth-internal-signing-key";
const PRIVATE_KEY = "private.pem";
const KID = "kid";

export interface SigningKey {
  /** RFC 7638 thumbprint of the public key. */
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** `{kty, n, e, kid, alg: "RS256", use: "sig"}` */
  publicJwk: JWK;
}

export async function signingKeyFromPem(pkcs8Pem: string): Promise<SigningKey> {
  const privateKey = createPrivateKey(pkcs8Pem);
  if (privateKey.asymmetricKeyType !== "rsa") throw new Error("the operator-token signing key must be RSA");
  const publicKey = createPublicKey(privateKey);
  const jwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint({ kty: "RSA", n: jwk.n, e: jwk.e });
  return { kid, privateKey, publicKey, publicJwk: { kty: "RSA", n: jwk.n, e: jwk.e, kid, alg: "RS256", use: "sig" } };
}

const SIGNING_KEY_BITS = 3072;
const generateRsa = promisify(generateKeyPair);

/** RSA 3072, PKCS#8 PEM, blocking (tests). */
export function generateSigningKeyPem(): string {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: SIGNING_KEY_BITS });
  return privateKey.export({ type: "pkcs8", format: "pem" }).toString();
}

/** The same off the event loop: generation takes seconds on a busy machine, and the API is starting. */
export async function generateSigningKeyPemAsync(): Promise<string> {
  const { privateKey } = await generateRsa("rsa", { modulusLength: SIGNING_KEY_BITS });
  return privateKey.export({ type: "pkcs8", format: "pem" }).toString();
}

export interface SigningKeyStoreOptions {
  /** The management cluster's client. */
  kube: KubeApi;
  namespace?: string;
  name?: string;
  log?: Logger;
}

const isStatus = (e: unknown, code: number) => e instanceof KubeError && e.status === code;

interface SecretObject {
  metadata?: { namespace?: string; name?: string };
  data?: Record<string, string>;
}

/**
 * Loads the signing key from the management cluster, creating it when absent. The namespace must exist
 * (the deployment creates `berth-system`); its absence is an error that says so.
 */
export async function loadOrCreateSigningKey(opts: SigningKeyStoreOptions): Promise<SigningKey> {
  const namespace = opts.namespace ?? SIGNING_KEY_NAMESPACE;
  const name = opts.name ?? SIGNING_KEY_SECRET;
  return loadOrCreate(opts.kube, namespace, name, opts.log);
}

async function loadOrCreate(
  kube: KubeApi,
  namespace: string,
  name: string,
  log: Logger | undefined,
): Promise<SigningKey> {
  const secrets = `/api/v1/namespaces/${seg(namespace)}/secrets`;

  const read = async (): Promise<SigningKey | undefined> => {
    try {
      const s = await kube.json<SecretObject>("GET", `${secrets}/${seg(name)}`);
      return await fromSecret(s);
    } catch (e) {
      if (isStatus(e, 404)) return undefined;
      throw e;
    }
  };

  const existing = await read();
  if (existing) return existing;

  const pem = await generateSigningKeyPemAsync();
  const candidate = await signingKeyFromPem(pem);
  try {
    await kube.json("POST", secrets, {
      body: {
        apiVersion: "v1",
        kind: "Secret",
        metadata: {
          name,
          namespace,
          labels: { [LABELS.partOf]: "berth", [LABELS.component]: "internal-signing-key" },
          annotations: {
            [ANNOTATIONS.purpose]: "RS256 key that signs operator tokens; never copy it out of this cluster",
          },
        },
        type: "Opaque",
        data: {
          [PRIVATE_KEY]: Buffer.from(pem).toString("base64"),
          [KID]: Buffer.from(candidate.kid).toString("base64"),
        },
      },
    });
    log?.info({ kind: "Secret", namespace, name, kid: candidate.kid }, "operator-token signing key created");
    return candidate;
  } catch (e) {
    if (isStatus(e, 409)) {
      // Another replica won the race: use its key.
      const winner = await read();
      if (winner) return winner;
    }
    if (isStatus(e, 404))
      throw new Error(`namespace ${namespace} does not exist in the management cluster; the deployment creates it`);
    throw e;
  }
}

async function fromSecret(s: SecretObject): Promise<SigningKey> {
  const b64 = s.data?.[PRIVATE_KEY];
  if (!b64) throw new Error(`Secret ${s.metadata?.namespace}/${s.metadata?.name} has no ${PRIVATE_KEY}`);
  return signingKeyFromPem(Buffer.from(b64, "base64").toString("utf8"));
}
