// Standard Webhooks signing (https://www.standardwebhooks.com): headers webhook-id, webhook-timestamp
// (seconds) and webhook-signature = space-separated "v1,<base64 HMAC-SHA256(key, `${id}.${ts}.${body}`)>",
// one per secret that signs (both during a rotation's overlap). A secret is "whsec_" + base64 of the key.
import { createHmac, randomBytes } from "node:crypto";

export const SECRET_PREFIX = "whsec_";

export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString("base64");
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, "base64");
}

export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac("sha256", keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`).digest("base64");
  return `v1,${mac}`;
}

export function signatureHeaders(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": secrets.map((s) => sign(s, id, timestampSeconds, body)).join(" "),
  };
}
