// Which registries Berth talks to and how: Docker Hub's API host, HTTPS for public registries, plain HTTP
// only for internal ones an operator trusts (BERTH_IMAGE_INTERNAL_REGISTRIES), and never an internal
// address otherwise (the same address rules as webhooks: api/src/domain/webhooks/ssrf.ts).

import { isIP } from "node:net";
import type { ImagesConfig } from "../../config.ts";
import { type Resolver, refusedBecause, systemResolver } from "../webhooks/ssrf.ts";
import { DOCKER_HUB } from "./reference.ts";
import { RegistryClient } from "./registry.ts";

export const USER_AGENT = "berth-images";

const hostOnly = (registry: string) =>
  registry
    .replace(/^\[/, "")
    .replace(/\](:\d+)?$/, "")
    .replace(/:\d+$/, "");

/** Why Berth will not call this registry, or null. Names that do not resolve are left to the copy to report. */
export async function sourceRefusal(
  config: ImagesConfig,
  registry: string,
  resolve: Resolver = systemResolver,
): Promise<string | null> {
  if (config.internalRegistries.includes(registry)) return null;
  const host = hostOnly(registry);
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = await resolve(host);
    } catch {
      return null;
    }
  }
  for (const a of addresses) {
    const why = refusedBecause(a);
    if (why) return `${registry} is ${why} (${a})`;
  }
  return null;
}

export function sourceClient(config: ImagesConfig, registry: string, timeoutMs?: number): RegistryClient {
  const base =
    registry === DOCKER_HUB
      ? "https://registry-1.docker.io"
      : `${config.internalRegistries.includes(registry) ? "http" : "https"}://${registry}`;
  return new RegistryClient({ baseUrl: base, userAgent: USER_AGENT, ...(timeoutMs ? { timeoutMs } : {}) });
}

export function targetClient(config: ImagesConfig, timeoutMs?: number): RegistryClient | undefined {
  const r = config.registry;
  if (!r) return undefined;
  return new RegistryClient({
    baseUrl: r.url,
    userAgent: USER_AGENT,
    ...(r.username && r.password ? { credentials: { username: r.username, password: r.password.reveal() } } : {}),
    ...(timeoutMs ? { timeoutMs } : {}),
  });
}
