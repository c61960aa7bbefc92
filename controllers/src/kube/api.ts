// What Berth asks of a Kubernetes client (KubeApi) and what it hands one: request options, a stored
// cluster's credential, watch events, server-side apply. The one implementation is client.ts' HttpKube;
// tests pass fakes of KubeApi.

export interface KubeResponse<T> {
  status: number;
  body: T;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** The body's type; default JSON, and a merge patch for PATCH (APPLY_PATCH: server-side apply). */
  contentType?: string;
  /** Aborted by a deadline (AbortSignal.timeout): reason TIMEOUT; otherwise ABORTED. */
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** Server-side apply's content type (JSON is YAML). */
export const APPLY_PATCH = "application/apply-patch+yaml";

/** What a stored GPU-cluster credential holds (api/src/domain/clusters/credential.ts' ClusterCredential). */
export interface KubeCredential {
  /** https://host[:port][/path] */
  server: string;
  caPem?: string | undefined;
  token?: string | undefined;
  clientCertPem?: string | undefined;
  clientKeyPem?: string | undefined;
  tlsServerName?: string | undefined;
}

export interface WatchEvent {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: Record<string, unknown>;
}

/** What the controllers need of a Kubernetes client. */
export interface KubeApi {
  readonly server: string;
  /**
   * Any HTTP status resolves; connection failures and timeouts reject with KubeTransportError. PATCH
   * bodies are merge patches unless `contentType` says otherwise.
   */
  request<T = unknown>(method: string, path: string, opts?: RequestOptions): Promise<KubeResponse<T>>;
  /** 2xx, or throws KubeError (an answer) or KubeTransportError (none). */
  json<T = unknown>(method: string, path: string, opts?: RequestOptions): Promise<T>;
  /**
   * Streams events until the server ends the watch (resolves), the connection fails or stays silent past
   * `idleTimeoutMs` (rejects), or `signal` aborts (resolves). A non-200 answer rejects with KubeError.
   * `onEvent` runs synchronously per event, in order; an error it throws ends the watch with that error.
   */
  watch(
    path: string,
    query: RequestOptions["query"],
    onEvent: (e: WatchEvent) => void,
    opts: { signal?: AbortSignal; idleTimeoutMs: number; onOpen?: () => void },
  ): Promise<void>;
}

/** Path segment escaping for names that come from input (node names, pod names). */
export const seg = (s: string): string => encodeURIComponent(s);

/**
 * Server-side apply of `object` (apiVersion, kind, metadata.name included) as `fieldManager`; `force` takes
 * over fields another manager set (where the object is ours). Created (201) or updated (200).
 */
export function serverSideApply<T = unknown>(
  kube: Pick<KubeApi, "request">,
  path: string,
  object: unknown,
  o: { fieldManager: string; force?: boolean; signal?: AbortSignal },
): Promise<KubeResponse<T>> {
  return kube.request<T>("PATCH", path, {
    body: object,
    contentType: APPLY_PATCH,
    query: { fieldManager: o.fieldManager, ...(o.force ? { force: true } : {}) },
    ...(o.signal ? { signal: o.signal } : {}),
  });
}
