import type { SecretKey } from "./secretBox.ts";
import { WebhookSecretBox } from "./secretBox.ts";
import { type Resolver, WebhookGuard } from "./ssrf.ts";

export interface WebhooksService {
  /** Checks endpoint URLs (at creation and on change; the dispatcher checks again per delivery). */
  guard: WebhookGuard;
  /** Seals signing secrets before they are stored (secretBox.ts; the worker opens them to sign). */
  secrets: WebhookSecretBox;
}

export function makeWebhooksService(o: {
  allowHosts: readonly string[];
  secretKeys: readonly SecretKey[];
  resolve?: Resolver;
}): WebhooksService {
  return { guard: new WebhookGuard(o), secrets: new WebhookSecretBox(o.secretKeys) };
}
