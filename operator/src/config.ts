// The operator's configuration: one zod schema, parsed once at start-up, every problem reported together.
// `configFromEnv` maps BERTH_OPERATOR_* variables onto it; it takes the environment as an argument, so
// only main.ts touches process.env. No value here is a secret: the operator token is read from
// `tokenFile` for every call, never held in configuration (rotation needs no restart).
import { leaseTimingProblems } from "@berth/controllers/kube";
import { DEFAULT_GATEWAY_NAMESPACE, GATEWAY_POD_LABELS, LABELS } from "@berth/crds";
import { z } from "zod";

/** The gateway's own pod labels as a selector: the replicas whose status ports are scraped. */
const GATEWAY_SELECTOR = `${LABELS.name}=${GATEWAY_POD_LABELS[LABELS.name]}`;

const port = z.coerce.number().int().min(0).max(65_535);
const ms = (min: number) => z.coerce.number().int().min(min);
/** A list that the environment gives comma-separated (blank entries dropped); empty when unset. */
const commaList = <T extends z.ZodType>(items: T) =>
  z
    .preprocess(
      (v) =>
        typeof v === "string"
          ? v
              .split(",")
              .map((x) => x.trim())
              .filter(Boolean)
          : v,
      items,
    )
    .default([] as never);

const KubeSource = z.discriminatedUnion("mode", [
  z.object({ mode: z.literal("kubeconfig"), path: z.string().min(1), context: z.string().min(1).optional() }),
  /** In-cluster: the pod's service account (token and CA under /var/run/secrets/kubernetes.io/serviceaccount). */
  z.object({ mode: z.literal("in-cluster"), host: z.string().min(1), port: z.string().min(1) }),
]);

export const OperatorConfigSchema = z
  .object({
    /** The id the control plane gave this cluster at registration (`clu_<id>`); it must match the token's. */
    clusterId: z.string().regex(/^clu_[a-z0-9]{1,59}$/, "must look like clu_<id> (lower-case letters and digits)"),
    kube: KubeSource,
    /** Base URL of the control plane's internal listener, e.g. http://berth-internal.berth-system:8081. */
    controlPlaneUrl: z.url({ protocol: /^https?$/ }),
    /** File holding the RS256 operator token; re-read for every attempt. */
    tokenFile: z.string().min(1),
    /** Timeout of one call to the control plane. */
    requestTimeoutMs: ms(100).default(10_000),
    http: z
      .object({ host: z.string().min(1).default("0.0.0.0"), port: port.default(8080) })
      .default({ host: "0.0.0.0", port: 8080 }),
    lease: z.object({
      namespace: z.string().min(1).default("berth-system"),
      name: z.string().min(1).default("berth-operator"),
      /** Unique per replica; the pod name in a Deployment. */
      identity: z.string().min(1),
      /** How long a follower waits after the last observed renewal before taking over. */
      durationMs: ms(100).default(15_000),
      /** The leader steps down when it could not renew for this long; must be below durationMs. */
      renewDeadlineMs: ms(50).default(10_000),
      /** Interval of renewals (leader) and of acquisition attempts (followers). */
      retryPeriodMs: ms(10).default(2_000),
    }),
    inventory: z
      .object({
        /** Quiet time after a change before the inventory is computed and (when it differs) sent. */
        debounceMs: ms(0).default(500),
        /** A full report is sent this long after the last successful one even when nothing changed. */
        resyncMs: ms(1_000).default(60_000),
        /** Page size of the initial list and relists. */
        listPageSize: z.coerce.number().int().min(1).default(500),
      })
      .default({ debounceMs: 500, resyncMs: 60_000, listPageSize: 500 }),
    sessions: z
      .object({
        /**
         * What session pods may reach inside the private ranges their NetworkPolicy keeps them from (a
         * package mirror; NodeLocal DNSCache at 169.254.20.10/32). Comma-separated in the environment.
         */
        egressAllow: commaList(
          z.array(z.union([z.cidrv4(), z.cidrv6()], { error: "must be a CIDR, e.g. 10.20.0.0/16" })).max(64),
        ),
        /**
         * How long a started session app may take to answer its readiness probe before its session
         * fails with the reason (controllers/src/mirror/plan.ts). Large images with many extensions start slowly.
         */
        appReadyTimeoutMs: ms(1_000).default(600_000),
      })
      .default({ egressAllow: [], appReadyTimeoutMs: 600_000 }),
    storage: z
      .object({
        /** The volume-sync tick: how often the storage driver's capacity objects are read and reported. */
        intervalMs: ms(100).default(30_000),
      })
      .default({ intervalMs: 30_000 }),
    usage: z
      .object({
        /** Length of a usage interval: one sample per session pod and interval. A whole number of seconds. */
        intervalMs: ms(1_000)
          .max(3_600_000) // the control plane refuses longer samples
          .refine((v) => v % 1000 === 0, "must be a whole number of seconds")
          .default(60_000),
        /** A closed interval is sent this long after its end. */
        graceMs: ms(0).default(2_000),
      })
      .default({ intervalMs: 60_000, graceMs: 2_000 }),
    /**
     * GPU utilisation and memory per pod for the usage samples (operator/src/gpu/dcgm.ts), from NVIDIA's
     * DCGM exporter. Without `url` samples carry GPU seconds only.
     */
    gpuMetrics: z
      .object({
        /** The exporter's metrics URL, e.g. http://nvidia-dcgm-exporter.gpu-operator:9400/metrics. */
        url: z.url({ protocol: /^https?$/ }).optional(),
        /** HAMi's vGPU monitor (per-container utilisation on shared cards), scraped with `url`. */
        hamiUrl: z.url({ protocol: /^https?$/ }).optional(),
        /**
         * More exporters to scrape with `url` (one per GPU node: dcgm-exporter and HAMi's monitor run as
         * DaemonSets). Comma-separated in the environment.
         */
        urls: commaList(z.array(z.url({ protocol: /^https?$/ })).max(2000)),
        /**
         * Forward every scrape (and the operator's own metrics) to the control plane's metrics server
         * through POST /internal/v1/metrics (docs/dev/monitoring.md).
         */
        forward: z
          .preprocess((v) => (typeof v === "string" ? v !== "false" && v !== "0" : v), z.boolean())
          .default(true),
        /** Time between scrapes; a sample's figures are the mean of the scrapes in its span. */
        intervalMs: ms(100).default(15_000),
        /** A scrape taking longer is abandoned (that span has fewer readings, or none). */
        timeoutMs: ms(100).default(5_000),
        /** Readings are kept this long, so that samples retried after an outage still carry them. */
        retentionMs: ms(1_000).default(3_600_000),
      })
      .default({ intervalMs: 15_000, timeoutMs: 5_000, retentionMs: 3_600_000, urls: [], forward: true }),
    /**
     * Berth's own processes in this cluster, forwarded on their own round (forwarding/processRound.ts,
     * with `gpuMetrics.forward`): the operator's exposition and every session gateway replica's status
     * port. Replicas are the pods matching `gatewaySelector` in `gatewayNamespace`, each read at its
     * container port named (or numbered) `gatewayPort`; `none` as the selector turns the search off.
     * `gatewayUrls` (comma-separated in the environment) are read as well: a gateway that is not a pod of
     * this cluster, as on the local fleet.
     */
    processMetrics: z
      .object({
        gatewayNamespace: z.string().min(1).default(DEFAULT_GATEWAY_NAMESPACE),
        gatewaySelector: z.preprocess((v) => (v === "none" ? "" : v), z.string()).default(GATEWAY_SELECTOR),
        gatewayPort: z
          .union([
            z.coerce.number().int().min(1).max(65_535),
            z.string().regex(/^[a-z0-9]([a-z0-9-]{0,13}[a-z0-9])?$/, "a port name or number"),
          ])
          .default("status"),
        gatewayUrls: commaList(z.array(z.url({ protocol: /^https?$/ })).max(100)),
        intervalMs: ms(100).default(15_000),
        timeoutMs: ms(100).default(5_000),
      })
      .default({
        gatewayNamespace: DEFAULT_GATEWAY_NAMESPACE,
        gatewaySelector: GATEWAY_SELECTOR,
        gatewayPort: "status",
        gatewayUrls: [],
        intervalMs: 15_000,
        timeoutMs: 5_000,
      }),
    /**
     * The idle rule's signals from this cluster (operator/src/activity/prober.ts): every `intervalMs` the
     * running session pods' GPU utilisation and notebook servers are read and reported; 0 turns it off
     * (sessions then never pause for idleness). `appUpstreams` (cr=host:port,*=host:port) replaces the
     * pods' own addresses (the operator's routes), as the gateway's static table does on the local fleet.
     */
    activity: z
      .object({
        intervalMs: ms(0).default(30_000),
        probeTimeoutMs: ms(100).default(5_000),
        namespace: z.string().min(1).default("berth-sessions"),
        appUpstreams: z.string().min(1).optional(),
        /**
         * With `appUpstreams`: pods whose address lies in one of these ranges are read at their own
         * address all the same (the local fleet's real node, whose pods the host reaches; its kwok pods'
         * addresses are data).
         */
        directCidrs: commaList(
          z.array(z.union([z.cidrv4(), z.cidrv6()], { error: "must be a CIDR, e.g. 10.234.0.0/24" })).max(64),
        ),
      })
      .default({ intervalMs: 30_000, probeTimeoutMs: 5_000, namespace: "berth-sessions", directCidrs: [] }),
    /**
     * Image builds (controllers/src/builds/): on a cluster marked for builds, the namespace where the
     * control plane writes ImageBuild resources and the operator runs their Jobs (made by the install, with
     * its Pod Security labels). Unset: this operator runs no builds. `nodeSelector` (`key=value,...`): the
     * nodes builds run on, replacing the default (any node without GPUs), e.g. the test bed's real node.
     */
    builds: z
      .object({
        namespace: z.string().min(1).max(63).optional(),
        nodeSelector: z
          .string()
          .regex(
            /^[A-Za-z0-9./_-]+=[A-Za-z0-9._-]*(,[A-Za-z0-9./_-]+=[A-Za-z0-9._-]*)*$/,
            "must be key=value pairs separated by commas",
          )
          .transform((v) => Object.fromEntries(v.split(",").map((p) => p.split("=", 2) as [string, string])))
          .optional(),
      })
      .default({}),
    backoff: z
      .object({
        baseMs: ms(1).default(500),
        maxMs: ms(1).default(30_000),
        jitter: z.coerce.number().min(0).max(1).default(0.5),
      })
      .default({ baseMs: 500, maxMs: 30_000, jitter: 0.5 }),
    logLevel: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  })
  .superRefine((c, ctx) => {
    const below = { renewDeadlineMs: "lease.durationMs", retryPeriodMs: "lease.renewDeadlineMs" };
    for (const field of leaseTimingProblems(c.lease))
      ctx.addIssue({ code: "custom", path: ["lease", field], message: `must be below ${below[field]}` });
    if (c.backoff.baseMs > c.backoff.maxMs)
      ctx.addIssue({ code: "custom", path: ["backoff", "baseMs"], message: "must not exceed backoff.maxMs" });
  });

export type OperatorConfig = z.output<typeof OperatorConfigSchema>;
export type OperatorConfigInput = z.input<typeof OperatorConfigSchema>;

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`invalid operator configuration:\n  ${problems.join("\n  ")}`);
    this.name = "ConfigError";
    this.problems = problems;
  }
}

/** Parses a configuration object; throws ConfigError listing every problem, named by `names` when given. */
export function parseConfig(input: unknown, names: Record<string, string> = {}): OperatorConfig {
  const r = OperatorConfigSchema.safeParse(input);
  if (r.success) return r.data;
  throw new ConfigError(
    r.error.issues.map((i) => {
      const path = i.path.join(".");
      // An item of a list names the list's variable (sessions.egressAllow.1 → its variable, item 2).
      const at = i.path.findIndex((k) => typeof k === "number");
      const list = at > 0 ? names[i.path.slice(0, at).join(".")] : undefined;
      const name = names[path] ?? (list ? `${list} (item ${Number(i.path[at]) + 1})` : path || "(config)");
      return `${name}: ${i.message}`;
    }),
  );
}

/** Environment variable → configuration path. */
export const ENV: Record<string, string> = {
  BERTH_OPERATOR_CLUSTER_ID: "clusterId",
  BERTH_OPERATOR_KUBECONFIG: "kube.path",
  BERTH_OPERATOR_KUBE_CONTEXT: "kube.context",
  BERTH_OPERATOR_CONTROL_PLANE_URL: "controlPlaneUrl",
  BERTH_OPERATOR_TOKEN_FILE: "tokenFile",
  BERTH_OPERATOR_REQUEST_TIMEOUT_MS: "requestTimeoutMs",
  BERTH_OPERATOR_HTTP_HOST: "http.host",
  BERTH_OPERATOR_HTTP_PORT: "http.port",
  BERTH_OPERATOR_LEASE_NAMESPACE: "lease.namespace",
  BERTH_OPERATOR_LEASE_NAME: "lease.name",
  BERTH_OPERATOR_IDENTITY: "lease.identity",
  BERTH_OPERATOR_LEASE_DURATION_MS: "lease.durationMs",
  BERTH_OPERATOR_LEASE_RENEW_DEADLINE_MS: "lease.renewDeadlineMs",
  BERTH_OPERATOR_LEASE_RETRY_PERIOD_MS: "lease.retryPeriodMs",
  BERTH_OPERATOR_INVENTORY_DEBOUNCE_MS: "inventory.debounceMs",
  BERTH_OPERATOR_INVENTORY_RESYNC_MS: "inventory.resyncMs",
  BERTH_OPERATOR_INVENTORY_PAGE_SIZE: "inventory.listPageSize",
  BERTH_OPERATOR_SESSION_EGRESS_ALLOW: "sessions.egressAllow",
  BERTH_OPERATOR_SESSION_APP_READY_TIMEOUT_MS: "sessions.appReadyTimeoutMs",
  BERTH_OPERATOR_USAGE_INTERVAL_MS: "usage.intervalMs",
  BERTH_OPERATOR_STORAGE_INTERVAL_MS: "storage.intervalMs",
  BERTH_OPERATOR_USAGE_GRACE_MS: "usage.graceMs",
  BERTH_OPERATOR_GPU_METRICS_URL: "gpuMetrics.url",
  BERTH_OPERATOR_HAMI_MONITOR_URL: "gpuMetrics.hamiUrl",
  BERTH_OPERATOR_ACTIVITY_INTERVAL_MS: "activity.intervalMs",
  BERTH_OPERATOR_ACTIVITY_PROBE_TIMEOUT_MS: "activity.probeTimeoutMs",
  BERTH_OPERATOR_ACTIVITY_APP_UPSTREAMS: "activity.appUpstreams",
  BERTH_OPERATOR_ACTIVITY_DIRECT_CIDRS: "activity.directCidrs",
  BERTH_OPERATOR_GPU_METRICS_URLS: "gpuMetrics.urls",
  BERTH_OPERATOR_GPU_METRICS_FORWARD: "gpuMetrics.forward",
  BERTH_OPERATOR_GATEWAY_NAMESPACE: "processMetrics.gatewayNamespace",
  BERTH_OPERATOR_GATEWAY_SELECTOR: "processMetrics.gatewaySelector",
  BERTH_OPERATOR_GATEWAY_STATUS_PORT: "processMetrics.gatewayPort",
  BERTH_OPERATOR_GATEWAY_METRICS_URLS: "processMetrics.gatewayUrls",
  BERTH_OPERATOR_METRICS_INTERVAL_MS: "processMetrics.intervalMs",
  BERTH_OPERATOR_GPU_METRICS_INTERVAL_MS: "gpuMetrics.intervalMs",
  BERTH_OPERATOR_GPU_METRICS_TIMEOUT_MS: "gpuMetrics.timeoutMs",
  BERTH_OPERATOR_GPU_METRICS_RETENTION_MS: "gpuMetrics.retentionMs",
  BERTH_OPERATOR_BUILDS_NAMESPACE: "builds.namespace",
  BERTH_OPERATOR_BUILDS_NODE_SELECTOR: "builds.nodeSelector",
  BERTH_OPERATOR_BACKOFF_BASE_MS: "backoff.baseMs",
  BERTH_OPERATOR_BACKOFF_MAX_MS: "backoff.maxMs",
  BERTH_OPERATOR_BACKOFF_JITTER: "backoff.jitter",
  BERTH_OPERATOR_LOG_LEVEL: "logLevel",
};

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split(".");
  let o = target;
  for (const k of keys.slice(0, -1)) {
    o[k] ??= {};
    o = o[k] as Record<string, unknown>;
  }
  o[keys.at(-1) as string] = value;
}

/**
 * Configuration from environment variables. Without BERTH_OPERATOR_KUBECONFIG the operator runs
 * in-cluster (KUBERNETES_SERVICE_HOST/PORT, as Kubernetes sets them). `defaultIdentity` is used when
 * BERTH_OPERATOR_IDENTITY is unset (main passes the host name, which is the pod name).
 */
export function configFromEnv(env: Record<string, string | undefined>, defaultIdentity?: string): OperatorConfig {
  const input: Record<string, unknown> = {};
  const names: Record<string, string> = {};
  for (const [name, path] of Object.entries(ENV)) {
    names[path] = name;
    const v = env[name];
    if (v !== undefined && v !== "") setPath(input, path, v);
  }
  const kube = (input.kube ?? {}) as Record<string, unknown>;
  if (kube.path !== undefined) kube.mode = "kubeconfig";
  else {
    Object.assign(kube, { mode: "in-cluster", host: env.KUBERNETES_SERVICE_HOST, port: env.KUBERNETES_SERVICE_PORT });
    names["kube.host"] = "BERTH_OPERATOR_KUBECONFIG (or KUBERNETES_SERVICE_HOST in a pod)";
    names["kube.port"] = "BERTH_OPERATOR_KUBECONFIG (or KUBERNETES_SERVICE_PORT in a pod)";
  }
  input.kube = kube;
  const lease = (input.lease ?? {}) as Record<string, unknown>;
  lease.identity ??= defaultIdentity;
  input.lease = lease;
  return parseConfig(input, names);
}
