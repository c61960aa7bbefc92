import { type Resolver, WebhookGuard } from "./ssrf.ts";

export interface WebhooksService {
  /** Checks endpoint URLs (at creation and on change; the dispatcher checks again per delivery). */
  guard: WebhookGuard;
}

export function makeWebhooksService(o: { allowHosts: readonly string[]; resolve?: Resolver }): WebhooksService {
  return { guard: new WebhookGuard(o) };
}
