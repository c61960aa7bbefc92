// Webhook signing secrets at rest. HMAC needs the key itself, so a hash will not do: each secret is sealed
// with AES-256-GCM under a key from configuration (BERTH_WEBHOOK_SECRET_KEYS, read by the API, which seals,
// and the worker, which opens to sign), bound to its endpoint's id (a sealed value copied onto another
// endpoint does not open). Stored as `enc:v1:<key id>:<base64 iv>:<base64 ciphertext+tag>`; a database dump
// alone signs nothing.
//
// Rotation of the key: put the new key first in the list and keep the old one after it (first seals, every
// listed key opens); the worker re-seals every endpoint under the first key (reseal.ts, hourly and at
// start); when no row names the old key id any more, drop it. A value that is not sealed (`whsec_…`, written
// before encryption) is opened as it is and sealed by the same pass.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

export interface SecretKey {
  /** Names the key in sealed values: letters, digits, '-' and '_'. */
  id: string;
  /** 32 bytes. */
  key: Buffer;
}

const PREFIX = "enc:v1:";
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

/**
 * `id:base64key,id2:base64key2` (first seals, all open) as keys; throws with what is wrong. Make a key with
 * `openssl rand -base64 32`.
 */
export function parseSecretKeys(spec: string): SecretKey[] {
  const keys: SecretKey[] = [];
  for (const part of spec
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const colon = part.indexOf(":");
    const id = colon > 0 ? part.slice(0, colon) : "";
    if (!KEY_ID.test(id))
      throw new Error(`each key is <id>:<base64 of 32 bytes>; "${id || part.slice(0, 8)}…" has no valid id`);
    const key = Buffer.from(part.slice(colon + 1), "base64");
    if (key.length !== 32)
      throw new Error(`key ${id} must be 32 bytes in base64 (openssl rand -base64 32), not ${key.length}`);
    if (keys.some((k) => k.id === id)) throw new Error(`key id ${id} is listed twice`);
    keys.push({ id, key });
  }
  if (keys.length === 0) throw new Error("name at least one key: <id>:<base64 of 32 bytes>");
  return keys;
}

/** A sealed secret that does not open here: the delivery fails with this message and is retried. */
export class SecretUnreadable extends Error {
  override name = "SecretUnreadable";
}

export class WebhookSecretBox {
  readonly #keys: readonly SecretKey[];

  constructor(keys: readonly SecretKey[]) {
    this.#keys = keys;
  }

  /** The key id new values are sealed with; undefined: none configured (values stay as they are). */
  get currentKeyId(): string | undefined {
    return this.#keys[0]?.id;
  }

  seal(secret: string, endpointId: string): string {
    const k = this.#keys[0];
    if (!k) throw new Error("no webhook secret key is configured (BERTH_WEBHOOK_SECRET_KEYS)");
    const iv = randomBytes(12);
    const c = createCipheriv("aes-256-gcm", k.key, iv);
    c.setAAD(Buffer.from(endpointId));
    const ct = Buffer.concat([c.update(secret, "utf8"), c.final(), c.getAuthTag()]);
    return `${PREFIX}${k.id}:${iv.toString("base64")}:${ct.toString("base64")}`;
  }

  /** The secret itself; a value sealed under a key not listed here, or altered, throws SecretUnreadable. */
  open(stored: string, endpointId: string): string {
    if (!stored.startsWith(PREFIX)) return stored;
    const [id, iv, ct] = stored.slice(PREFIX.length).split(":");
    const k = this.#keys.find((x) => x.id === id);
    if (!k || !iv || !ct)
      throw new SecretUnreadable(
        `the endpoint's secret is sealed with key ${id ?? "?"}, which BERTH_WEBHOOK_SECRET_KEYS does not list here`,
      );
    try {
      const buf = Buffer.from(ct, "base64");
      const d = createDecipheriv("aes-256-gcm", k.key, Buffer.from(iv, "base64"));
      d.setAAD(Buffer.from(endpointId));
      d.setAuthTag(buf.subarray(buf.length - 16));
      return Buffer.concat([d.update(buf.subarray(0, buf.length - 16)), d.final()]).toString("utf8");
    } catch {
      throw new SecretUnreadable(`the endpoint's secret does not open with key ${id}: altered, or another endpoint's`);
    }
  }

  /** What every value sealed under the current key starts with; undefined: no key. */
  get currentPrefix(): string | undefined {
    const current = this.currentKeyId;
    return current === undefined ? undefined : `${PREFIX}${current}:`;
  }
}
