// A small client of the registry HTTP API (OCI distribution v2): manifests, blob existence, blob
// streams, monolithic streamed uploads. Authentication follows the registries' challenge: a 401 with
// `WWW-Authenticate: Bearer realm=…,service=…,scope=…` is answered by asking the realm for a token
// (anonymously, or with the configured credentials) and retrying once; `Basic` uses the credentials.

import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { Readable } from "node:stream";
import { type Dispatcher, fetch as undiciFetch } from "undici";

export const MANIFEST_TYPES = {
  ociIndex: "application/vnd.oci.image.index.v1+json",
  dockerList: "application/vnd.docker.distribution.manifest.list.v2+json",
  ociManifest: "application/vnd.oci.image.manifest.v1+json",
  dockerManifest: "application/vnd.docker.distribution.manifest.v2+json",
} as const;
const ACCEPT = Object.values(MANIFEST_TYPES).join(", ");

export type RegistryErrorKind = "not_found" | "unauthorized" | "unreachable" | "protocol" | "too_large";

export class RegistryError extends Error {
  readonly kind: RegistryErrorKind;
  readonly status: number | undefined;
  constructor(kind: RegistryErrorKind, message: string, status?: number) {
    super(message);
    this.kind = kind;
    this.status = status;
  }
}

export interface RegistryCredentials {
  username: string;
  password: string;
}

export interface RegistryClientOptions {
  /** http(s)://host[:port], no trailing slash. */
  baseUrl: string;
  credentials?: RegistryCredentials;
  /** Per request (headers of a blob stream included); default 30 s. */
  timeoutMs?: number;
  userAgent?: string;
  /** Where connections go (an import's pinned addresses, sources.ts); default: Node's fetch and DNS. */
  dispatcher?: Dispatcher;
}

export interface FetchedManifest {
  mediaType: string;
  bytes: Buffer;
  /** The registry's Docker-Content-Digest, when it sent one. */
  digest: string | undefined;
}

const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;

/** Parses `Bearer realm="…",service="…"` (quoted values may hold commas). */
export function parseChallenge(header: string): { scheme: string; params: Record<string, string> } {
  const m = /^\s*(\w+)\s*(.*)$/s.exec(header);
  const params: Record<string, string> = {};
  const re = /(\w+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^,\s]*))/g;
  for (const p of (m?.[2] ?? "").matchAll(re)) params[(p[1] ?? "").toLowerCase()] = p[2] ?? p[3] ?? "";
  return { scheme: (m?.[1] ?? "").toLowerCase(), params };
}

export class RegistryClient {
  readonly baseUrl: string;
  readonly #o: RegistryClientOptions;
  /** Tokens by scope, with when they stop being good. */
  readonly #tokens = new Map<string, { token: string; until: number }>();
  #basic = false;

  constructor(o: RegistryClientOptions) {
    this.baseUrl = o.baseUrl.replace(/\/+$/, "");
    this.#o = o;
  }

  get #timeout(): number {
    return this.#o.timeoutMs ?? 30_000;
  }

  #authHeader(scope: string): Record<string, string> {
    const t = this.#tokens.get(scope);
    if (t && t.until > Date.now()) return { Authorization: `Bearer ${t.token}` };
    if (this.#basic && this.#o.credentials) return { Authorization: this.#basicValue() };
    return {};
  }

  #basicValue(): string {
    const c = this.#o.credentials as RegistryCredentials;
    return `Basic ${Buffer.from(`${c.username}:${c.password}`).toString("base64")}`;
  }

  /** Answers a 401's challenge; false when it cannot be answered (no realm, refused). */
  async #authenticate(res: Response, scope: string): Promise<boolean> {
    const { scheme, params } = parseChallenge(res.headers.get("www-authenticate") ?? "");
    if (scheme === "basic") {
      if (!this.#o.credentials || this.#basic) return false;
      this.#basic = true;
      return true;
    }
    if (scheme !== "bearer" || !params.realm) return false;
    let realm: URL;
    try {
      realm = new URL(params.realm);
    } catch {
      return false;
    }
    if (params.service) realm.searchParams.set("service", params.service);
    realm.searchParams.set("scope", scope);
    const headers: Record<string, string> = { "User-Agent": this.#o.userAgent ?? "berth" };
    if (this.#o.credentials) headers.Authorization = this.#basicValue();
    const r = await this.#fetch(realm.toString(), { headers }, "asking for a token");
    if (!r.ok) {
      await r.body?.cancel();
      return false;
    }
    const body = (await r.json().catch(() => ({}))) as { token?: string; access_token?: string; expires_in?: number };
    const token = body.token ?? body.access_token;
    if (!token) return false;
    const ttl = Math.max(30, Math.min(body.expires_in ?? 60, 3600));
    this.#tokens.set(scope, { token, until: Date.now() + (ttl - 10) * 1000 });
    return true;
  }

  async #fetch(url: string, init: RequestInit, what: string): Promise<Response> {
    try {
      const signal = init.signal ?? AbortSignal.timeout(this.#timeout);
      if (this.#o.dispatcher)
        return (await undiciFetch(url, {
          ...(init as object),
          signal,
          dispatcher: this.#o.dispatcher,
        })) as unknown as Response;
      return await fetch(url, { ...init, signal });
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      if (cause?.code === "EBERTHFORBIDDEN")
        throw new RegistryError("unauthorized", `Berth does not import from internal addresses: ${cause.message}`);
      throw new RegistryError(
        "unreachable",
        `the registry ${new URL(url).host} did not answer ${what} (${cause?.code ?? cause?.message ?? (e as Error).message})`,
      );
    }
  }

  /** A request with the challenge answered once; the caller reads (or cancels) the body. */
  async send(
    method: string,
    path: string,
    o: { scope: string; headers?: Record<string, string>; body?: BodyInit; what: string; signal?: AbortSignal },
  ): Promise<Response> {
    const url = path.startsWith("http") ? path : `${this.baseUrl}${path}`;
    const go = () =>
      this.#fetch(
        url,
        {
          method,
          headers: { "User-Agent": this.#o.userAgent ?? "berth", ...this.#authHeader(o.scope), ...o.headers },
          ...(o.body !== undefined ? { body: o.body } : {}),
          ...(o.signal ? { signal: o.signal } : {}),
        },
        o.what,
      );
    let res = await go();
    if (res.status === 401 && (await this.#authenticate(res, o.scope))) {
      await res.body?.cancel();
      res = await go();
    }
    return res;
  }

  static pullScope(repository: string): string {
    return `repository:${repository}:pull`;
  }
  static pushScope(repository: string): string {
    return `repository:${repository}:pull,push`;
  }

  async #fail(res: Response, what: string, notFound: string): Promise<never> {
    const text = (await res.text().catch(() => "")).slice(0, 300);
    if (res.status === 404) throw new RegistryError("not_found", notFound, 404);
    if (res.status === 401 || res.status === 403)
      throw new RegistryError(
        "unauthorized",
        `the registry refused ${what} (${res.status}): it is private or needs credentials`,
        res.status,
      );
    if (res.status >= 500 || res.status === 429)
      throw new RegistryError("unreachable", `the registry failed ${what} (${res.status})`, res.status);
    throw new RegistryError("protocol", `the registry answered ${res.status} to ${what}: ${text}`, res.status);
  }

  async getManifest(
    repository: string,
    ref: string,
    scope = RegistryClient.pullScope(repository),
  ): Promise<FetchedManifest> {
    const what = `the manifest of ${repository}:${ref}`;
    const res = await this.send("GET", `/v2/${repository}/manifests/${ref}`, {
      scope,
      headers: { Accept: ACCEPT },
      what,
    });
    if (!res.ok) return this.#fail(res, what, `${repository}:${ref} was not found in the registry`);
    const length = Number(res.headers.get("content-length") ?? 0);
    if (length > MAX_MANIFEST_BYTES) {
      await res.body?.cancel();
      throw new RegistryError("protocol", `the manifest of ${repository}:${ref} is larger than 4 MiB`);
    }
    const bytes = Buffer.from(await res.arrayBuffer());
    if (bytes.length > MAX_MANIFEST_BYTES)
      throw new RegistryError("protocol", `the manifest of ${repository}:${ref} is larger than 4 MiB`);
    const mediaType = (res.headers.get("content-type") ?? "").split(";")[0]?.trim() ?? "";
    return { mediaType, bytes, digest: res.headers.get("docker-content-digest") ?? undefined };
  }

  async hasBlob(repository: string, digest: string, scope = RegistryClient.pullScope(repository)): Promise<boolean> {
    const res = await this.send("HEAD", `/v2/${repository}/blobs/${digest}`, {
      scope,
      what: `checking blob ${digest}`,
    });
    await res.body?.cancel();
    if (res.status === 200) return true;
    if (res.status === 404) return false;
    return this.#fail(res, `checking blob ${digest}`, "");
  }

  /** The blob's body as a web stream (redirects to storage are followed). */
  async blob(repository: string, digest: string, signal: AbortSignal): Promise<ReadableStream<Uint8Array>> {
    const what = `the blob ${digest} of ${repository}`;
    const res = await this.send("GET", `/v2/${repository}/blobs/${digest}`, {
      scope: RegistryClient.pullScope(repository),
      what,
      signal,
    });
    if (!res.ok || !res.body) return this.#fail(res, what, `the blob ${digest} of ${repository} was not found`);
    return res.body;
  }

  /**
   * Uploads a blob in one streamed PUT (POST for an upload location, then PUT …&digest=): the body is never
   * held in memory. The registry checks the digest too.
   */
  async pushBlob(repository: string, digest: string, size: number, body: Readable): Promise<void> {
    const scope = RegistryClient.pushScope(repository);
    const start = await this.send("POST", `/v2/${repository}/blobs/uploads/`, {
      scope,
      what: `starting an upload to ${repository}`,
    });
    await start.body?.cancel();
    const location = start.headers.get("location");
    if (start.status !== 202 || !location)
      return this.#fail(start, `starting an upload to ${repository}`, `no repository ${repository}`);
    const url = new URL(location, `${this.baseUrl}/`);
    url.searchParams.set("digest", digest);
    const auth = this.#authHeader(scope);
    await new Promise<void>((resolve, reject) => {
      if (body.errored) return reject(body.errored);
      const req = (url.protocol === "https:" ? httpsRequest : httpRequest)(
        url,
        {
          method: "PUT",
          headers: {
            "Content-Type": "application/octet-stream",
            "Content-Length": String(size),
            "User-Agent": this.#o.userAgent ?? "berth",
            ...auth,
          },
          timeout: this.#timeout,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => {
            if (chunks.length < 16) chunks.push(c);
          });
          res.on("end", () => {
            if (res.statusCode === 201) return resolve();
            const text = Buffer.concat(chunks).toString("utf8").slice(0, 300);
            const kind =
              (res.statusCode ?? 0) >= 500
                ? "unreachable"
                : res.statusCode === 401 || res.statusCode === 403
                  ? "unauthorized"
                  : "protocol";
            reject(
              new RegistryError(
                kind,
                `the registry answered ${res.statusCode} to the upload of ${digest}: ${text}`,
                res.statusCode,
              ),
            );
          });
          res.on("error", reject);
        },
      );
      req.on("timeout", () => req.destroy(new RegistryError("unreachable", `the upload of ${digest} stalled`)));
      req.on("error", (e) =>
        reject(
          e instanceof RegistryError
            ? e
            : new RegistryError("unreachable", `the upload of ${digest} failed: ${e.message}`),
        ),
      );
      body.on("error", (e) => req.destroy(e));
      body.pipe(req);
    });
  }

  /** Puts a manifest; answers the digest the registry gives it. */
  async putManifest(repository: string, ref: string, mediaType: string, bytes: Buffer): Promise<string | undefined> {
    const what = `pushing the manifest of ${repository}:${ref}`;
    const res = await this.send("PUT", `/v2/${repository}/manifests/${ref}`, {
      scope: RegistryClient.pushScope(repository),
      headers: { "Content-Type": mediaType },
      body: new Uint8Array(bytes),
      what,
    });
    await res.body?.cancel();
    if (res.status !== 201) return this.#fail(res, what, `no repository ${repository}`);
    return res.headers.get("docker-content-digest") ?? undefined;
  }

  /** Deletes a manifest by digest (registries that do not allow deleting answer 405: ignored). */
  async deleteManifest(repository: string, digest: string): Promise<void> {
    const res = await this.send("DELETE", `/v2/${repository}/manifests/${digest}`, {
      scope: RegistryClient.pushScope(repository),
      what: `deleting ${repository}@${digest}`,
    });
    await res.body?.cancel();
    if (res.ok || res.status === 404 || res.status === 405) return;
    return this.#fail(res, `deleting ${repository}@${digest}`, "");
  }
}
