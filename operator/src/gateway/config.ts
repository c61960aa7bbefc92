// The gateway's configuration: one zod schema, parsed once at start-up from BERTH_GATEWAY_* variables,
// every problem reported together. The operator token and the cookie keys are read from files (the token
// for every verification, so a rotated token needs no restart), never held in the environment.
import { z } from "zod";

/** The operator's status Service in the system namespace (cdk8s/src/gpu-cluster.ts). */
export const DEFAULT_ROUTES_URL = "http://berth-operator.berth-system.svc:8080/routes";

const port = z.coerce.number().int().min(0).max(65_535);
const list = z.string().transform((v) =>
  v
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean),
);

export const GatewayConfigSchema = z.object({
  clusterId: z.string().regex(/^clu_[A-Za-z0-9_-]+$/, "must look like clu_<id>"),
  /** Base URL of the control plane's internal listener. */
  controlPlaneUrl: z.url({ protocol: /^https?$/ }),
  /** This cluster's operator token (the gateway authenticates as the cluster's operator plane). */
  tokenFile: z.string().min(1),
  host: z.string().min(1).default("0.0.0.0"),
  port: port.default(8443),
  tls: z
    .discriminatedUnion("mode", [
      z.object({ mode: z.literal("files"), certFile: z.string().min(1), keyFile: z.string().min(1) }),
      /** Generate a self-signed certificate for these names at start (the local fleet). */
      z.object({ mode: z.literal("self-signed"), names: list.pipe(z.array(z.string().min(1)).min(1)) }),
      /** Plain HTTP: TLS ends in front of the gateway (set secureCookies). */
      z.object({ mode: z.literal("none") }),
    ])
    .default({ mode: "none" }),
  secureCookies: z
    .enum(["true", "false"])
    .transform((v) => v === "true")
    .optional(),
  /** One key per line (base64 or hex, ≥ 32 bytes); the first signs. Unset: a random key per process. */
  cookieKeyFile: z.string().min(1).optional(),
  cookieTtlSeconds: z.coerce.number().int().min(60).max(3600).default(600),
  verifyTimeoutMs: z.coerce.number().int().min(100).max(60_000).default(5000),
  /** How often user activity is reported to the control plane (the idle rule's traffic signal); 0: never. */
  activityIntervalMs: z.coerce.number().int().min(0).max(600_000).default(30_000),
  upstreamConnectTimeoutMs: z.coerce.number().int().min(100).max(60_000).default(5000),
  upstream: z
    .discriminatedUnion("mode", [
      /** The session pod's address, from the operator's table (its GET /routes; upstream.ts). */
      z.object({
        mode: z.literal("routes"),
        url: z.url({ protocol: /^https?$/ }).default(DEFAULT_ROUTES_URL),
      }),
      /** "cr=host:port,*=host:port": the local fleet's stand-in application. */
      z.object({ mode: z.literal("static"), table: z.string().min(1) }),
    ])
    .default({ mode: "routes", url: DEFAULT_ROUTES_URL }),
  /**
   * Processes serving the port together (SO_REUSEPORT; workers.ts). Unset: os.availableParallelism().
   * One Node thread proxies some thousands of requests per second; set this to the pod's CPU limit.
   */
  workers: z.coerce.number().int().min(1).max(256).optional(),
  /** The status port (GET /metrics, the workers' counters merged); unset: none. The operator reads it. */
  statusPort: port.optional(),
  statusHost: z.string().min(1).default("0.0.0.0"),
  logLevel: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

export type GatewayConfig = z.output<typeof GatewayConfigSchema>;

export class GatewayConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`invalid gateway configuration:\n  ${problems.join("\n  ")}`);
    this.name = "GatewayConfigError";
    this.problems = problems;
  }
}

/** Environment variable -> configuration path. */
export const GATEWAY_ENV: Record<string, string> = {
  BERTH_GATEWAY_CLUSTER_ID: "clusterId",
  BERTH_GATEWAY_CONTROL_PLANE_URL: "controlPlaneUrl",
  BERTH_GATEWAY_TOKEN_FILE: "tokenFile",
  BERTH_GATEWAY_HOST: "host",
  BERTH_GATEWAY_PORT: "port",
  BERTH_GATEWAY_TLS_CERT_FILE: "tls.certFile",
  BERTH_GATEWAY_TLS_KEY_FILE: "tls.keyFile",
  BERTH_GATEWAY_TLS_SELF_SIGNED_NAMES: "tls.names",
  BERTH_GATEWAY_SECURE_COOKIES: "secureCookies",
  BERTH_GATEWAY_COOKIE_KEY_FILE: "cookieKeyFile",
  BERTH_GATEWAY_COOKIE_TTL_SECONDS: "cookieTtlSeconds",
  BERTH_GATEWAY_VERIFY_TIMEOUT_MS: "verifyTimeoutMs",
  BERTH_GATEWAY_ACTIVITY_INTERVAL_MS: "activityIntervalMs",
  BERTH_GATEWAY_UPSTREAM_CONNECT_TIMEOUT_MS: "upstreamConnectTimeoutMs",
  BERTH_GATEWAY_ROUTES_URL: "upstream.url",
  BERTH_GATEWAY_STATIC_UPSTREAMS: "upstream.table",
  BERTH_GATEWAY_WORKERS: "workers",
  BERTH_GATEWAY_STATUS_PORT: "statusPort",
  BERTH_GATEWAY_STATUS_HOST: "statusHost",
  BERTH_GATEWAY_LOG_LEVEL: "logLevel",
};

export function gatewayConfigFromEnv(env: Record<string, string | undefined>): GatewayConfig {
  const input: Record<string, Record<string, unknown> | unknown> = {};
  const names: Record<string, string> = {};
  for (const [name, path] of Object.entries(GATEWAY_ENV)) {
    names[path] = name;
    const v = env[name];
    if (v === undefined || v === "") continue;
    const [a, b] = path.split(".") as [string, string | undefined];
    if (b === undefined) input[a] = v;
    else {
      input[a] ??= {};
      (input[a] as Record<string, unknown>)[b] = v;
    }
  }
  const tls = input.tls as Record<string, unknown> | undefined;
  if (tls) tls.mode = tls.names !== undefined ? "self-signed" : "files";
  const up = input.upstream as Record<string, unknown> | undefined;
  if (up) up.mode = up.table !== undefined ? "static" : "routes";
  const r = GatewayConfigSchema.safeParse(input);
  if (r.success) return r.data;
  throw new GatewayConfigError(
    r.error.issues.map((i) => {
      const path = i.path.join(".");
      return `${names[path] ?? (path || "(config)")}: ${i.message}`;
    }),
  );
}

/** "cr=host:port,*=host:port" -> entries (StaticUpstreams' input). */
export function parseUpstreamTable(table: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of table
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const eq = part.indexOf("=");
    if (eq <= 0) throw new GatewayConfigError([`BERTH_GATEWAY_STATIC_UPSTREAMS: "${part}" is not cr=host:port`]);
    out[part.slice(0, eq)] = part.slice(eq + 1);
  }
  return out;
}

/** Cookie keys from a file: one per line, base64 or hex; at least 32 bytes each. */
export function parseCookieKeys(text: string): Buffer[] {
  const keys = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"))
    .map((l) => (/^[0-9a-fA-F]+$/.test(l) && l.length % 2 === 0 ? Buffer.from(l, "hex") : Buffer.from(l, "base64")));
  if (keys.length === 0) throw new GatewayConfigError(["cookie key file holds no key"]);
  if (keys.some((k) => k.length < 32)) throw new GatewayConfigError(["every cookie key must be at least 32 bytes"]);
  return keys;
}
