// The control plane in the management cluster: the API (public listener behind an Ingress, internal
// listener for operators behind its own Service and a NetworkPolicy), the worker, their ServiceAccounts
// with the grants their code lists, and the database connection.
// The options' database and registry parts, with the environment they give, are in
// control-plane-database.ts and control-plane-registry.ts.
import { apiSessionsRbac, catalogRbac, managementRbac, workerRbac } from "@berth/api/rbac";
import { ApiObject } from "cdk8s";
import { Construct } from "constructs";
import { type DatabaseOptions, databaseEnv } from "./control-plane-database.ts";
import { type RegistryChoice, registryEnv } from "./control-plane-registry.ts";
import { DEFAULT_BUILDS_NAMESPACE } from "./gpu-cluster.ts";
import { MetricsServer, type MetricsServerOptions } from "./metrics-server.ts";
import { addressRange, ingressPolicy, podsLabelled, service } from "./network.ts";
import * as check from "./options.ts";
import { OptionError } from "./options.ts";
import {
  container,
  ENTRY,
  type Env,
  fromSecret,
  type ImageOptions,
  labelsOf,
  plain,
  podSpec,
  type Resources,
} from "./pod.ts";
import { InClusterPostgres } from "./postgres.ts";
import { mergeRules, ServiceAccountWithRules } from "./rbac.ts";

export type { DatabaseOptions } from "./control-plane-database.ts";
export type { RegistryChoice } from "./control-plane-registry.ts";

export interface ControlPlaneOptions {
  /** The control plane's namespace (created here). Default `berth-system`. */
  namespace?: string;
  image: ImageOptions;
  /** The public host of the console and API (the Ingress rule), e.g. `berth.example.com`. */
  publicHost: string;
  /** The Ingress's TLS Secret for `publicHost`; unset: no TLS on the Ingress (TLS ends elsewhere). */
  publicTlsSecretName?: string;
  /** Unset: the cluster's default IngressClass. */
  ingressClassName?: string;
  /**
   * The ingress controller pods' ranges (usually the pod CIDR): the API takes the client's address from
   * their X-Forwarded-For (BERTH_TRUSTED_PROXY_CIDRS). Empty: the socket's peer, i.e. the controller.
   */
  trustedProxyCidrs?: string[];
  api: {
    /** Replicas at rest, and the autoscaler's minimum. */
    replicas: number;
    /** The autoscaler's maximum (CPU-driven). */
    maxReplicas: number;
    resources?: Resources;
    /**
     * Secret holding `jwt-secret` (the user-token signing secret, ≥ 32 characters) and
     * `webhook-secret-keys` (`<id>:<base64 of 32 bytes>`, first seals webhook signing secrets, all open;
     * the worker reads it too).
     */
    secretName?: string;
  };
  worker: { replicas: number; resources?: Resources };
  /** The internal listener operators and gateways call. */
  internal: {
    /** Source ranges allowed to reach it: the GPU clusters' egress addresses. Also the API's own range gate. */
    allowCidrs: string[];
    /** Service type: `LoadBalancer` for GPU clusters on other networks. Default `ClusterIP`. */
    serviceType?: "ClusterIP" | "LoadBalancer";
    /**
     * The ranges the NetworkPolicy admits to it; default `allowCidrs`. Empty for a GPU cluster charted into
     * this cluster and namespace, whose `allowCidrs` must then hold the pod range for the API's gate: the
     * policy then admits only that namespace's operator and gateway pods, not every pod of the range.
     */
    policyCidrs?: string[];
  };
  database: DatabaseOptions;
  /** The control plane's metrics server (docs/dev/monitoring.md). */
  metrics: MetricsServerOptions;
  /** The session namespace on GPU clusters (BERTH_SESSIONS_NAMESPACE). Default `berth-sessions`. */
  sessionsNamespace?: string;
  logLevel?: "fatal" | "error" | "warn" | "info" | "debug" | "trace";
  /**
   * Where members' private images go (docs/dev/images.md): exactly one of `external` and `berth`. Absent:
   * imports and builds answer 503.
   */
  registry?: RegistryChoice;
  /** Image builds (docs/dev/images.md); every build cluster's `builds.namespace` must be this one. */
  builds?: {
    /** BERTH_BUILD_NAMESPACE on the build clusters. Default `berth-builds`. */
    namespace?: string;
    /** Where build pods may connect besides DNS (BERTH_BUILD_EGRESS_CIDRS): the registry, package mirrors. */
    egressCidrs?: string[];
  };
}

export const API_RESOURCES: Resources = {
  requests: { cpu: "250m", memory: "256Mi" },
  limits: { cpu: "2", memory: "1Gi" },
};
export const WORKER_RESOURCES: Resources = {
  requests: { cpu: "100m", memory: "192Mi" },
  limits: { cpu: "1", memory: "512Mi" },
};

const API_PORT = 8080;
const INTERNAL_PORT = 8081;
const WORKER_STATUS_PORT = 8082;
/** The API's Prometheus exposition, off the public listener. */
const API_METRICS_PORT = 9464;

/** The API's account: clusters, sessions and the default catalog (their rule lists in @berth/api). */
export const apiRules = (ns: string) => mergeRules(managementRbac(ns), apiSessionsRbac(), catalogRbac());
export const workerRules = (ns: string) => mergeRules(workerRbac(ns));

export class ControlPlane extends Construct {
  readonly namespace: string;
  constructor(scope: Construct, id: string, o: ControlPlaneOptions) {
    super(scope, id);
    const ns = check.dnsLabel("namespace", o.namespace ?? "berth-system");
    this.namespace = ns;
    check.image("image.image", o.image.image);
    check.hostname("publicHost", o.publicHost);
    check.count("api.replicas", o.api.replicas);
    check.count("api.maxReplicas", o.api.maxReplicas);
    if (o.api.maxReplicas < o.api.replicas)
      throw new OptionError("api.maxReplicas", `${o.api.maxReplicas} is below api.replicas (${o.api.replicas})`);
    check.count("worker.replicas", o.worker.replicas);
    const allowCidrs = check.cidrs("internal.allowCidrs", o.internal.allowCidrs, { min: 1 });
    const policyCidrs = o.internal.policyCidrs
      ? check.cidrs("internal.policyCidrs", o.internal.policyCidrs)
      : allowCidrs;
    const trustedProxies = check.cidrs("trustedProxyCidrs", o.trustedProxyCidrs ?? []);
    const sessionsNs = check.dnsLabel("sessionsNamespace", o.sessionsNamespace ?? "berth-sessions");
    const db = databaseEnv(o.database);
    const buildsNs = check.dnsLabel("builds.namespace", o.builds?.namespace ?? DEFAULT_BUILDS_NAMESPACE);
    const buildEgress = check.cidrs("builds.egressCidrs", o.builds?.egressCidrs ?? []);

    new ApiObject(this, "namespace", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: ns, labels: { "pod-security.kubernetes.io/enforce": "restricted", ...labelsOf("berth") } },
    });

    // --- database
    if (o.database.cloudNativePg) {
      const c = o.database.cloudNativePg;
      new ApiObject(this, "postgres", {
        apiVersion: "postgresql.cnpg.io/v1",
        kind: "Cluster",
        metadata: { name: "berth-postgres", namespace: ns, labels: labelsOf("berth-postgres") },
        spec: {
          instances: c.instances,
          bootstrap: { initdb: { database: "berth", owner: "berth" } },
          storage: { size: c.storageSize, ...(c.storageClass ? { storageClass: c.storageClass } : {}) },
        },
      });
    }

    // --- API
    const apiLabels = labelsOf("berth-api");
    const workerLabels = labelsOf("berth-worker");
    if (o.database.inCluster)
      new InClusterPostgres(this, "in-cluster-postgres", {
        ...o.database.inCluster,
        namespace: ns,
        clients: [apiLabels, workerLabels],
      });

    const common: Env[] = [
      db,
      ...plain({
        BERTH_LOG_LEVEL: o.logLevel ?? "info",
        BERTH_SYSTEM_NAMESPACE: ns,
        BERTH_SESSIONS_NAMESPACE: sessionsNs,
        BERTH_BUILD_NAMESPACE: buildsNs,
        BERTH_BUILD_EGRESS_CIDRS: buildEgress.length ? buildEgress.join(",") : undefined,
      }),
      ...registryEnv(this, o.registry, ns, [apiLabels, workerLabels]),
    ];
    const metrics = new MetricsServer(this, "metrics", {
      ...o.metrics,
      namespace: ns,
      apiLabels,
      scrape: [
        { job: "berth-api", labels: { "app.kubernetes.io/name": "berth-api" } },
        { job: "berth-worker", labels: { "app.kubernetes.io/name": "berth-worker" } },
      ],
    });
    const api = new ServiceAccountWithRules(this, "api-account", {
      name: "berth-api",
      namespace: ns,
      rules: apiRules(ns),
      labels: apiLabels,
    });
    const apiSecret = o.api.secretName ?? "berth-api";
    new ApiObject(this, "api", {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "berth-api", namespace: ns, labels: apiLabels },
      spec: {
        replicas: o.api.replicas,
        selector: { matchLabels: apiLabels },
        strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
        template: {
          metadata: { labels: apiLabels },
          spec: podSpec({
            serviceAccountName: api.name,
            kubeApi: true,
            image: o.image,
            topologySpread: apiLabels,
            containers: [
              container({
                name: "api",
                image: o.image,
                command: ENTRY.api,
                env: [
                  ...common,
                  fromSecret("BERTH_JWT_SECRET", apiSecret, "jwt-secret"),
                  fromSecret("BERTH_WEBHOOK_SECRET_KEYS", apiSecret, "webhook-secret-keys"),
                  ...plain({
                    BERTH_API_PORT: String(API_PORT),
                    BERTH_PUBLIC_URL: `${o.publicTlsSecretName ? "https" : "http"}://${o.publicHost}`,
                    BERTH_INTERNAL_PORT: String(INTERNAL_PORT),
                    BERTH_INTERNAL_ALLOW_CIDRS: allowCidrs.join(","),
                    BERTH_TRUSTED_PROXY_CIDRS: trustedProxies.length ? trustedProxies.join(",") : undefined,
                    BERTH_METRICS_PORT: String(API_METRICS_PORT),
                    BERTH_METRICS_SERVER_URL: metrics.url,
                  }),
                ],
                ports: [
                  { name: "http", containerPort: API_PORT },
                  { name: "internal", containerPort: INTERNAL_PORT },
                  { name: "metrics", containerPort: API_METRICS_PORT },
                ],
                resources: o.api.resources ?? API_RESOURCES,
                health: { path: "/healthz", port: "http" },
              }),
            ],
          }),
        },
      },
    });
    service(this, "api-service", {
      name: "berth-api",
      namespace: ns,
      labels: apiLabels,
      port: { name: "http", port: 80 },
    });
    new ApiObject(this, "api-pdb", {
      apiVersion: "policy/v1",
      kind: "PodDisruptionBudget",
      metadata: { name: "berth-api", namespace: ns, labels: apiLabels },
      // One replica may always go (a drain never blocks); with one replica, a drain waits for none.
      spec: { maxUnavailable: 1, selector: { matchLabels: apiLabels } },
    });
    new ApiObject(this, "api-hpa", {
      apiVersion: "autoscaling/v2",
      kind: "HorizontalPodAutoscaler",
      metadata: { name: "berth-api", namespace: ns, labels: apiLabels },
      spec: {
        scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "berth-api" },
        minReplicas: o.api.replicas,
        maxReplicas: o.api.maxReplicas,
        metrics: [
          { type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 70 } } },
        ],
      },
    });
    new ApiObject(this, "ingress", {
      apiVersion: "networking.k8s.io/v1",
      kind: "Ingress",
      metadata: { name: "berth", namespace: ns, labels: apiLabels },
      spec: {
        ...(o.ingressClassName ? { ingressClassName: o.ingressClassName } : {}),
        ...(o.publicTlsSecretName ? { tls: [{ hosts: [o.publicHost], secretName: o.publicTlsSecretName }] } : {}),
        rules: [
          {
            host: o.publicHost,
            http: {
              paths: [
                {
                  path: "/",
                  pathType: "Prefix",
                  backend: { service: { name: "berth-api", port: { name: "http" } } },
                },
              ],
            },
          },
        ],
      },
    });

    // --- the internal listener: its own Service, reachable only from the configured ranges
    // A LoadBalancer keeps the operator's own address, which the API's range gate checks.
    service(this, "internal-service", {
      name: "berth-internal",
      namespace: ns,
      labels: apiLabels,
      port: { name: "internal", port: INTERNAL_PORT },
      type: o.internal.serviceType ?? "ClusterIP",
      loadBalancerSourceRanges: allowCidrs,
    });
    ingressPolicy(this, "api-policy", {
      name: "berth-api",
      namespace: ns,
      labels: apiLabels,
      ingress: [
        // The public listener: the ingress controller and in-cluster clients.
        { port: API_PORT },
        // The internal listener: only the configured ranges, and the operator's and gateway's pods of a
        // GPU cluster charted into this cluster and namespace (a range there would admit every pod in it).
        {
          port: INTERNAL_PORT,
          from: [
            ...policyCidrs.map(addressRange),
            podsLabelled(labelsOf("berth-operator")),
            podsLabelled(labelsOf("berth-gateway")),
          ],
        },
        // The metrics listener: the metrics server's scrapes only.
        { port: API_METRICS_PORT, from: [podsLabelled(labelsOf("berth-metrics"))] },
      ],
    });

    // --- worker
    const worker = new ServiceAccountWithRules(this, "worker-account", {
      name: "berth-worker",
      namespace: ns,
      rules: workerRules(ns),
      labels: workerLabels,
    });
    new ApiObject(this, "worker", {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "berth-worker", namespace: ns, labels: workerLabels },
      spec: {
        // Replicas beyond one stand by: one holds the `berth-worker` Lease and runs the loops.
        replicas: o.worker.replicas,
        selector: { matchLabels: workerLabels },
        template: {
          metadata: { labels: workerLabels },
          spec: podSpec({
            serviceAccountName: worker.name,
            kubeApi: true,
            image: o.image,
            containers: [
              container({
                name: "worker",
                image: o.image,
                command: ENTRY.worker,
                env: [
                  ...common,
                  { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
                  // Opens the webhook secrets the API sealed (and re-seals them under a new first key).
                  fromSecret("BERTH_WEBHOOK_SECRET_KEYS", apiSecret, "webhook-secret-keys"),
                  ...plain({ BERTH_WORKER_STATUS_PORT: String(WORKER_STATUS_PORT) }),
                ],
                // Named `metrics` too: the metrics server scrapes the port by that name (/metrics is on it).
                ports: [{ name: "metrics", containerPort: WORKER_STATUS_PORT }],
                resources: o.worker.resources ?? WORKER_RESOURCES,
                health: { path: "/healthz", port: "metrics" },
              }),
            ],
          }),
        },
      },
    });
    // Only probes and scrapes come in, on the status port.
    ingressPolicy(this, "worker-policy", {
      name: "berth-worker",
      namespace: ns,
      labels: workerLabels,
      ingress: [{ port: WORKER_STATUS_PORT }],
    });
  }
}
