// Every setting of the API process, parsed once at start-up from the environment (main.ts passes
// process.env in; nothing below main.ts reads it). Every problem is reported together, and secrets are
// wrapped so they never print by accident.
import { createPrivateKey, createPublicKey, type KeyObject } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { parsePublicKey } from "./domain/images/signatures.ts";
import { parseSecretKeys } from "./domain/webhooks/secretBox.ts";
import { parseCidr } from "./internal/cidr.ts";

const isCidr = (v: string): boolean => {
  try {
    parseCidr(v);
    return true;
  } catch {
    return false;
  }
};

/** A secret value: prints as [redacted] in logs and JSON; call reveal() where it is really needed. */
export class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  reveal(): string {
    return this.#value;
  }
  toString(): string {
    return "[redacted]";
  }
  toJSON(): string {
    return "[redacted]";
  }
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return "Secret([redacted])";
  }
}

const secret = (minLength: number) =>
  z
    .string()
    .min(minLength, `must be at least ${minLength} characters`)
    .transform((v) => new Secret(v))
    .meta({ secret: true });

/** A TCP port; 0 lets the system choose one. */
export const Port = z.coerce.number().int().min(0).max(65535);
const bool = z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");
const list = z.string().transform((v) =>
  v
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean),
);

/** Webhook targets an operator trusts although internal; the API and the worker's dispatcher read the same list. */
export const WebhookAllowHosts = list.default([]);

/**
 * Keys that seal webhook signing secrets at rest, `id:base64,…` (first seals, all open; the API and the
 * worker need the same list; domain/webhooks/secretBox.ts). Kept as a Secret: parse it where it is used.
 */
export const WebhookSecretKeys = z
  .string()
  .superRefine((v, ctx) => {
    try {
      parseSecretKeys(v);
    } catch (err) {
      ctx.addIssue({ code: "custom", message: (err as Error).message });
    }
  })
  .transform((v) => new Secret(v))
  .meta({ secret: true });

const CIDR = /^(\d{1,3}\.){3}\d{1,3}\/(\d|[12]\d|3[0-2])$|^[0-9a-fA-F:]+\/(\d|\d\d|1[01]\d|12[0-8])$/;

// Shared with the worker's configuration (worker/config.ts): the same names mean the same there.

/** A kubeconfig file that is there (a missing one would only fail at the first call, with a stack trace). */
export const KubeconfigPath = z
  .string()
  .min(1)
  .refine((p) => existsSync(p), "no such file");

/** A Kubernetes namespace name (a DNS label). */
export const Namespace = z
  .string()
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "must be a DNS label: lowercase letters, digits and '-'");

export const DatabaseUrl = z
  .string()
  .regex(/^postgres(ql)?:\/\//, "must be a postgres:// URL")
  .transform((v) => new Secret(v));
export const PoolMax = z.coerce.number().int().min(1).max(500).default(20);

/** The database, as the API and the worker read it (db/knex.ts). */
export const DatabaseEnv = {
  DATABASE_URL: DatabaseUrl,
  BERTH_DATABASE_POOL_MAX: PoolMax,
  /** A query Postgres has not answered in this long fails as 503 unavailable. */
  BERTH_DATABASE_QUERY_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(3600).default(30),
};

export interface DatabaseConfig {
  url: Secret;
  poolMax: number;
  queryTimeoutMs: number;
}

export function databaseConfigOf(e: {
  DATABASE_URL: Secret;
  BERTH_DATABASE_POOL_MAX: number;
  BERTH_DATABASE_QUERY_TIMEOUT_SECONDS: number;
}): DatabaseConfig {
  return {
    url: e.DATABASE_URL,
    poolMax: e.BERTH_DATABASE_POOL_MAX,
    queryTimeoutMs: e.BERTH_DATABASE_QUERY_TIMEOUT_SECONDS * 1000,
  };
}
export const LogLevel = z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info");

/**
 * Members' private images (docs/dev/images.md): Berth's own registry, where imports and builds go, and
 * the bounds of an import. The API and the worker read the same variables.
 */
export const ImagesEnv = {
  /** Where Berth pushes private images (http(s)://host[:port]); unset: imports and builds answer 503. */
  BERTH_REGISTRY_URL: z.url().optional(),
  /** How the GPU clusters name that registry in image references (default: the URL's host[:port]). */
  BERTH_REGISTRY_PULL_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9.-]+(:\d+)?(\/[a-z0-9._-]+)*$/, "must be host[:port][/path]")
    .optional(),
  BERTH_REGISTRY_USERNAME: z.string().min(1).optional(),
  BERTH_REGISTRY_PASSWORD: z
    .string()
    .min(1)
    .transform((v) => new Secret(v))
    .meta({ secret: true })
    .optional(),
  /** The largest image an import copies (refused before a byte moves). Default 20 GiB. */
  BERTH_IMAGE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(20 * 1024 ** 3),
  /** Platforms an index is resolved to, in order of preference (os/arch[/variant]). */
  BERTH_IMAGE_PLATFORMS: z
    .string()
    .default("linux/amd64")
    .transform((v) =>
      v
        .split(",")
        .map((p) => p.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().regex(/^[a-z0-9]+\/[a-z0-9_]+(\/[a-z0-9]+)?$/, "must be os/arch[/variant]")).min(1)),
  /**
   * Source registries trusted although their addresses are internal (a mirror, the test bed's stand-in
   * for a public registry), spoken to over plain HTTP. Others must be public and speak HTTPS.
   */
  BERTH_IMAGE_INTERNAL_REGISTRIES: list.default([]),
  /**
   * Berth's own signing key (PEM, ECDSA P-256 or Ed25519): members' builds and imports are signed with it,
   * and its signatures are trusted when image signatures are required (docs/dev/images.md).
   */
  BERTH_IMAGE_SIGNING_KEY_FILE: z
    .string()
    .min(1)
    .optional()
    .transform((path, ctx) => {
      if (!path) return undefined;
      try {
        return signingKeyOf(readFileSync(path, "utf8"));
      } catch (e) {
        ctx.addIssue({ code: "custom", message: `${path}: ${(e as Error).message}` });
        return z.NEVER;
      }
    }),
  /** Private images a member may hold (ready ones and imports and builds in flight); the contract's 20. */
  BERTH_PRIVATE_IMAGES_PER_MEMBER: z.coerce.number().int().min(1).max(20).default(20),
  /** Builds: the namespace of build Jobs on build clusters, the builder image, and the bounds of a build. */
  BERTH_BUILD_NAMESPACE: Namespace.default("berth-builds"),
  BERTH_BUILDER_IMAGE: z.string().min(1).max(512).default("moby/buildkit:v0.26.2-rootless"),
  BERTH_BUILD_DOCKERFILE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(64)
    .max(256 * 1024)
    .default(64 * 1024),
  BERTH_BUILDS_PER_ORGANIZATION: z.coerce.number().int().min(1).max(1000).default(4),
  BERTH_BUILD_TIMEOUT_SECONDS: z.coerce.number().int().min(60).max(86_400).default(3600),
  BERTH_BUILD_LOG_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(1024 * 1024),
  /** Where build pods may connect besides DNS: Berth's registry and package mirrors (CIDRs). */
  BERTH_BUILD_EGRESS_CIDRS: list.default([]),
};

export interface SigningKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
}

/** A private key in PEM that Berth signs with; its public half is what verifiers are given. */
export function signingKeyOf(pem: string): SigningKey {
  const privateKey = createPrivateKey(pem);
  const publicKey = createPublicKey(privateKey);
  parsePublicKey(publicKey.export({ type: "spki", format: "pem" }).toString());
  return { privateKey, publicKey };
}

export interface ImagesConfig {
  registry?: { url: string; pullPrefix: string; username?: string; password?: Secret };
  maxImageBytes: number;
  platforms: string[];
  internalRegistries: string[];
  perMember: number;
  /** Berth's signing key, when one is configured. */
  signingKey?: SigningKey;
  builds: {
    namespace: string;
    builderImage: string;
    dockerfileMaxBytes: number;
    perOrganization: number;
    timeoutSeconds: number;
    logMaxBytes: number;
    egressCidrs: string[];
  };
}

export function imagesConfigOf(e: {
  BERTH_REGISTRY_URL?: string | undefined;
  BERTH_REGISTRY_PULL_PREFIX?: string | undefined;
  BERTH_REGISTRY_USERNAME?: string | undefined;
  BERTH_REGISTRY_PASSWORD?: Secret | undefined;
  BERTH_IMAGE_MAX_BYTES: number;
  BERTH_IMAGE_PLATFORMS: string[];
  BERTH_IMAGE_INTERNAL_REGISTRIES: string[];
  BERTH_PRIVATE_IMAGES_PER_MEMBER: number;
  BERTH_IMAGE_SIGNING_KEY_FILE?: SigningKey | undefined;
  BERTH_BUILD_NAMESPACE: string;
  BERTH_BUILDER_IMAGE: string;
  BERTH_BUILD_DOCKERFILE_MAX_BYTES: number;
  BERTH_BUILDS_PER_ORGANIZATION: number;
  BERTH_BUILD_TIMEOUT_SECONDS: number;
  BERTH_BUILD_LOG_MAX_BYTES: number;
  BERTH_BUILD_EGRESS_CIDRS: string[];
}): ImagesConfig {
  const url = e.BERTH_REGISTRY_URL?.replace(/\/+$/, "");
  return {
    ...(url
      ? {
          registry: {
            url,
            pullPrefix: e.BERTH_REGISTRY_PULL_PREFIX ?? new URL(url).host,
            ...(e.BERTH_REGISTRY_USERNAME ? { username: e.BERTH_REGISTRY_USERNAME } : {}),
            ...(e.BERTH_REGISTRY_PASSWORD ? { password: e.BERTH_REGISTRY_PASSWORD } : {}),
          },
        }
      : {}),
    maxImageBytes: e.BERTH_IMAGE_MAX_BYTES,
    platforms: e.BERTH_IMAGE_PLATFORMS,
    internalRegistries: e.BERTH_IMAGE_INTERNAL_REGISTRIES,
    perMember: e.BERTH_PRIVATE_IMAGES_PER_MEMBER,
    ...(e.BERTH_IMAGE_SIGNING_KEY_FILE ? { signingKey: e.BERTH_IMAGE_SIGNING_KEY_FILE } : {}),
    builds: {
      namespace: e.BERTH_BUILD_NAMESPACE,
      builderImage: e.BERTH_BUILDER_IMAGE,
      dockerfileMaxBytes: e.BERTH_BUILD_DOCKERFILE_MAX_BYTES,
      perOrganization: e.BERTH_BUILDS_PER_ORGANIZATION,
      timeoutSeconds: e.BERTH_BUILD_TIMEOUT_SECONDS,
      logMaxBytes: e.BERTH_BUILD_LOG_MAX_BYTES,
      egressCidrs: e.BERTH_BUILD_EGRESS_CIDRS,
    },
  };
}

/** The environment variables we read, with their defaults. Names are the contract for operators. */
const Env = z.object({
  BERTH_API_HOST: z.string().min(1).default("0.0.0.0"),
  BERTH_API_PORT: Port.default(8080),
  /** Public base URL as clients see it (links, OpenAPI servers); defaults to http://127.0.0.1:<port>. */
  BERTH_PUBLIC_URL: z.url().optional(),
  ...DatabaseEnv,
  BERTH_LOG_LEVEL: LogLevel,
  /** HS256 secret for user access tokens (auth domain). */
  BERTH_JWT_SECRET: secret(32),
  /** Lifetime of a user access token; there is no refresh, the user signs in again. */
  BERTH_ACCESS_TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(900),
  /**
   * How long a replica keeps a loaded principal (0 = off). Also the longest a revocation or role change
   * made through another replica goes unseen here (docs/dev/identity.md).
   */
  BERTH_PRINCIPAL_CACHE_SECONDS: z.coerce.number().min(0).max(60).default(5),
  BERTH_BOOTSTRAP_EMAIL: z.email().default("admin@berth.local"),
  /** When unset, the bootstrap administrator's password is generated and printed once. */
  BERTH_BOOTSTRAP_PASSWORD: secret(12).optional(),
  /** kubeconfig of the management cluster (catalog custom resources); unset = none / in-cluster later. */
  BERTH_KUBECONFIG: KubeconfigPath.optional(),
  /** The console's built files, served at `/`. Default: console/dist of this repository (npm start builds it). */
  BERTH_CONSOLE_DIR: z
    .string()
    .min(1)
    .default(fileURLToPath(new URL("../../console/dist", import.meta.url))),
  /** Origins allowed to call the API from a browser. Empty = no CORS headers (the console is same-origin). */
  BERTH_CORS_ALLOW_ORIGINS: list.default([]),
  BERTH_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(1024 * 1024),
  /** How long an Idempotency-Key is remembered (the issue asks for at least 24 h). */
  BERTH_IDEMPOTENCY_RETENTION_HOURS: z.coerce
    .number()
    .min(24)
    .max(24 * 30)
    .default(24),
  /** An in-flight key older than this is taken to belong to a crashed request and may be taken over. */
  BERTH_IDEMPOTENCY_INFLIGHT_TIMEOUT_SECONDS: z.coerce.number().int().min(5).max(3600).default(300),
  /** Check every response against its declared schema (500 on a mismatch or a leaked field). */
  BERTH_VALIDATE_RESPONSES: bool.default(true),
  /** Bounds of one audit-log CSV export: the longest range (days) and the most rows. */
  BERTH_AUDIT_EXPORT_MAX_DAYS: z.coerce.number().int().min(1).max(3660).default(366),
  BERTH_AUDIT_EXPORT_MAX_ROWS: z.coerce.number().int().min(1).max(10_000_000).default(1_000_000),
  /** Internal plane (operator callbacks, /.well-known): closed unless both are set. */
  BERTH_INTERNAL_HOST: z.string().min(1).default("0.0.0.0"),
  BERTH_INTERNAL_PORT: Port.default(8081),
  BERTH_INTERNAL_ALLOW_CIDRS: list
    .default([])
    .pipe(
      z.array(
        z
          .string()
          .regex(CIDR, "must be a CIDR such as 10.0.0.0/8")
          .refine(isCidr, "must be a CIDR such as 10.0.0.0/8 or fd00::/8"),
      ),
    ),
  /**
   * Webhook targets an operator trusts although they are internal (loopback, private, ...): host names
   * (exact), addresses or CIDRs. Everything else internal is refused (docs/dev/webhooks.md).
   */
  BERTH_WEBHOOK_ALLOW_HOSTS: WebhookAllowHosts,
  ...ImagesEnv,
  /** Keys sealing webhook signing secrets in the database (`id:base64 of 32 bytes`, first seals, all open). */
  BERTH_WEBHOOK_SECRET_KEYS: WebhookSecretKeys,
  /**
   * Reverse proxies (the cluster's ingress controller) whose X-Forwarded-For names the client, for the
   * sign-in throttle and the internal plane's gate (http/clientAddress.ts). Empty: the socket's peer.
   */
  BERTH_TRUSTED_PROXY_CIDRS: list
    .default([])
    .pipe(
      z.array(
        z
          .string()
          .regex(CIDR, "must be a CIDR such as 10.0.0.0/8")
          .refine(isCidr, "must be a CIDR such as 10.0.0.0/8 or fd00::/8"),
      ),
    ),
  /** Cluster registration probe and connection test give up after this long ("about two minutes"). */
  BERTH_CLUSTER_PROBE_TIMEOUT_SECONDS: z.coerce.number().min(1).max(600).default(120),
  /** The RuntimeClass GPU session pods use, and the handler registration requires it to have. */
  BERTH_GPU_RUNTIME_CLASS: z.string().min(1).max(253).default("nvidia"),
  BERTH_GPU_RUNTIME_HANDLER: z.string().min(1).max(253).default("nvidia"),
  /** Namespace of session pods on the GPU clusters. */
  BERTH_SESSIONS_NAMESPACE: Namespace.default("berth-sessions"),
  /** The control plane's namespace in the management cluster: cluster credentials, the token signing key. */
  BERTH_SYSTEM_NAMESPACE: Namespace.default("berth-system"),
  /** The control plane's metrics server (docs/dev/monitoring.md); unset: monitoring answers `unavailable`. */
  BERTH_METRICS_SERVER_URL: z.url().optional(),
  /** The process's own Prometheus exposition, on a listener of its own, never the public one. */
  BERTH_METRICS_HOST: z.string().min(1).default("0.0.0.0"),
  BERTH_METRICS_PORT: Port.default(9464),
});

export interface Config {
  api: { host: string; port: number; publicUrl: string };
  database: DatabaseConfig;
  log: { level: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent" };
  auth: {
    jwtSecret: Secret;
    accessTokenTtlSeconds: number;
    principalCacheSeconds: number;
    bootstrapEmail: string;
    bootstrapPassword?: Secret;
  };
  /** A kubeconfig file, else the pod's own ServiceAccount when running in a cluster (cdk8s manifests). */
  kube: { kubeconfigPath?: string; inCluster?: boolean };
  http: { corsAllowOrigins: string[]; bodyLimitBytes: number; validateResponses: boolean };
  /** Where the console's built files are (the API serves them; it does not build them). */
  console: { dir: string };
  idempotency: { retentionSeconds: number; inFlightTimeoutSeconds: number };
  audit: { export: { maxDays: number; maxRows: number } };
  internal: { host: string; port: number; allowCidrs: string[]; enabled: boolean };
  webhooks: { allowHosts: string[]; secretKeys: Secret };
  /** Optional so that configurations built by hand (tests) need not name it: absent = no registry. */
  images?: ImagesConfig;
  /** Optional so that configurations built by hand (tests) need not name it: absent = no trusted proxy. */
  clientAddress?: { trustedProxyCidrs: string[] };
  clusters: {
    probeTimeoutMs: number;
    runtimeClassName: string;
    runtimeClassHandler: string;
    sessionsNamespace: string;
    systemNamespace: string;
  };
  /** Optional so that configurations built by hand (tests) need not name it. */
  monitoring?: { serverUrl?: string; listener: { host: string; port: number } };
}

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
    this.problems = problems;
  }
}

/** The environment through `schema`; throws ConfigError listing every problem at once. */
export function parseEnv<S extends z.ZodType>(schema: S, env: Record<string, string | undefined>): z.output<S> {
  // Empty strings mean "unset", as in most deployment tools.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const r = schema.safeParse(cleaned);
  if (!r.success)
    throw new ConfigError(r.error.issues.map((i) => `${i.path.join(".") || "(environment)"}: ${i.message}`));
  return r.data;
}

/** Parses the environment into a Config; throws ConfigError listing every problem at once. */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const e = parseEnv(Env, env);
  return {
    api: {
      host: e.BERTH_API_HOST,
      port: e.BERTH_API_PORT,
      publicUrl: e.BERTH_PUBLIC_URL ?? `http://127.0.0.1:${e.BERTH_API_PORT}`,
    },
    database: databaseConfigOf(e),
    log: { level: e.BERTH_LOG_LEVEL },
    auth: {
      jwtSecret: e.BERTH_JWT_SECRET,
      accessTokenTtlSeconds: e.BERTH_ACCESS_TOKEN_TTL_SECONDS,
      principalCacheSeconds: e.BERTH_PRINCIPAL_CACHE_SECONDS,
      bootstrapEmail: e.BERTH_BOOTSTRAP_EMAIL,
      ...(e.BERTH_BOOTSTRAP_PASSWORD ? { bootstrapPassword: e.BERTH_BOOTSTRAP_PASSWORD } : {}),
    },
    kube: e.BERTH_KUBECONFIG
      ? { kubeconfigPath: e.BERTH_KUBECONFIG }
      : env.KUBERNETES_SERVICE_HOST
        ? { inCluster: true }
        : {},
    http: {
      corsAllowOrigins: e.BERTH_CORS_ALLOW_ORIGINS,
      bodyLimitBytes: e.BERTH_BODY_LIMIT_BYTES,
      validateResponses: e.BERTH_VALIDATE_RESPONSES,
    },
    console: { dir: e.BERTH_CONSOLE_DIR },
    idempotency: {
      retentionSeconds: Math.round(e.BERTH_IDEMPOTENCY_RETENTION_HOURS * 3600),
      inFlightTimeoutSeconds: e.BERTH_IDEMPOTENCY_INFLIGHT_TIMEOUT_SECONDS,
    },
    audit: { export: { maxDays: e.BERTH_AUDIT_EXPORT_MAX_DAYS, maxRows: e.BERTH_AUDIT_EXPORT_MAX_ROWS } },
    internal: {
      host: e.BERTH_INTERNAL_HOST,
      port: e.BERTH_INTERNAL_PORT,
      allowCidrs: e.BERTH_INTERNAL_ALLOW_CIDRS,
      enabled: e.BERTH_INTERNAL_ALLOW_CIDRS.length > 0,
    },
    webhooks: { allowHosts: e.BERTH_WEBHOOK_ALLOW_HOSTS, secretKeys: e.BERTH_WEBHOOK_SECRET_KEYS },
    images: imagesConfigOf(e),
    clientAddress: { trustedProxyCidrs: e.BERTH_TRUSTED_PROXY_CIDRS },
    clusters: {
      probeTimeoutMs: Math.round(e.BERTH_CLUSTER_PROBE_TIMEOUT_SECONDS * 1000),
      runtimeClassName: e.BERTH_GPU_RUNTIME_CLASS,
      runtimeClassHandler: e.BERTH_GPU_RUNTIME_HANDLER,
      sessionsNamespace: e.BERTH_SESSIONS_NAMESPACE,
      systemNamespace: e.BERTH_SYSTEM_NAMESPACE,
    },
    monitoring: {
      ...(e.BERTH_METRICS_SERVER_URL ? { serverUrl: e.BERTH_METRICS_SERVER_URL } : {}),
      listener: { host: e.BERTH_METRICS_HOST, port: e.BERTH_METRICS_PORT },
    },
  };
}
