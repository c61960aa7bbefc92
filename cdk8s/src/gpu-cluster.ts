// What one GPU cluster runs: its namespaces (the session namespace enforced at Pod Security
// `restricted`, with a default-deny NetworkPolicy under the operator's per-session policy), the
// operator (leader-elected, its grants from operatorRbac()), the session gateway for `sessionDomain`,
// and the account the control plane uses on this cluster (its grants from controlPlaneRbac()). With
// `builds`, also a build cluster: the builds namespace, the operator's build controller and both accounts'
// build grants (docs/dev/images.md).
import { buildClusterRbac, controlPlaneRbac } from "@berth/api/rbac";
import { operatorRbac } from "@berth/operator";
import { ApiObject } from "cdk8s";
import { Construct } from "constructs";
import { ingressPolicy, podsLabelled, service } from "./network.ts";
import * as check from "./options.ts";
import { OptionError } from "./options.ts";
import { container, ENTRY, type ImageOptions, labelsOf, plain, podSpec, type Resources } from "./pod.ts";
import { mergeRules, ServiceAccountWithRules } from "./rbac.ts";

export interface GpuClusterOptions {
  /** The id the control plane gave the cluster at registration (`clu_…`). */
  clusterId: string;
  /** The control plane's internal listener as this cluster reaches it, e.g. https://berth-internal.example.com:8081. */
  controlPlaneUrl: string;
  image: ImageOptions;
  /** Where the operator, the gateway and their Secrets live. Default `berth-system`. */
  systemNamespace?: string;
  /** Where session pods run. Default `berth-sessions`. */
  sessionsNamespace?: string;
  /**
   * The Secret holding this cluster's operator token (key `token`), handed out at registration. Rotate it
   * by replacing the Secret: both processes read the file on every use. Default `berth-operator-token`.
   */
  operatorTokenSecretName?: string;
  operator: {
    /** Two or more: one leads (Lease `berth-operator`), the others stand by. */
    replicas: number;
    resources?: Resources;
    /** Extra CIDRs session pods may reach (BERTH_OPERATOR_SESSION_EGRESS_ALLOW). */
    sessionEgressAllow?: string[];
  };
  gateway: {
    /** The cluster's `session_domain`: the host of every session URL on this cluster. */
    sessionDomain: string;
    replicas: number;
    resources?: Resources;
    /**
     * A `kubernetes.io/tls` Secret for `sessionDomain` (cert-manager or yours): the gateway serves TLS
     * itself. Unset: plain HTTP, TLS ends in front of the gateway (an Ingress or load balancer).
     */
    tlsSecretName?: string;
    /** A Secret whose key `keys` holds the connect-cookie keys, one a line, the first signing. */
    cookieKeySecretName: string;
    /** Default `LoadBalancer` (externalTrafficPolicy Local keeps client addresses). */
    serviceType?: "ClusterIP" | "LoadBalancer";
  };
  /**
   * Makes this a build cluster (docs/dev/images.md): the builds namespace (Pod Security `enforce:
   * privileged`, `warn`/`audit: restricted`: rootless BuildKit needs unconfined seccomp and AppArmor, which
   * `baseline` refuses; nothing else runs there), the operator's build controller
   * (BERTH_OPERATOR_BUILDS_NAMESPACE) with `operatorRbac({buildsNamespace})`, and the control plane's
   * account's right to write ImageBuilds there (buildClusterRbac()). The operator applies the namespace's
   * egress policy itself (controllers/src/builds/manifests.ts). Then mark the cluster:
   * `PUT /api/v1/image-builds/clusters/{id}`.
   */
  builds?: {
    /** Must be the control plane's `builds.namespace` (BERTH_BUILD_NAMESPACE). Default `berth-builds`. */
    namespace?: string;
  };
  logLevel?: "fatal" | "error" | "warn" | "info" | "debug" | "trace";
}

export const DEFAULT_BUILDS_NAMESPACE = "berth-builds";

export const OPERATOR_RESOURCES: Resources = {
  requests: { cpu: "100m", memory: "192Mi" },
  limits: { cpu: "1", memory: "512Mi" },
};
export const GATEWAY_RESOURCES: Resources = {
  requests: { cpu: "250m", memory: "256Mi" },
  limits: { cpu: "2", memory: "1Gi" },
};

const OPERATOR_PORT = 8080;
const GATEWAY_PORT = 8443;
/** The gateway's status port: its workers' counters merged (operator/src/gateway/metrics.ts). */
const GATEWAY_STATUS_PORT = 9464;

export const operatorRules = (system: string, sessions: string, builds?: string) =>
  operatorRbac({
    systemNamespace: system,
    sessionsNamespace: sessions,
    ...(builds ? { buildsNamespace: builds } : {}),
  });
export const controlPlaneRules = (sessions: string, builds?: string) =>
  mergeRules(
    controlPlaneRbac({ sessions, devicePlugin: "kube-system" }),
    ...(builds ? [buildClusterRbac(builds)] : []),
  );

export class GpuCluster extends Construct {
  constructor(scope: Construct, id: string, o: GpuClusterOptions) {
    super(scope, id);
    if (!/^clu_[A-Za-z0-9_-]+$/.test(o.clusterId))
      throw new OptionError("clusterId", `"${o.clusterId}" is not a cluster id such as clu_01h…`);
    check.url("controlPlaneUrl", o.controlPlaneUrl);
    check.image("image.image", o.image.image);
    const system = check.dnsLabel("systemNamespace", o.systemNamespace ?? "berth-system");
    const sessions = check.dnsLabel("sessionsNamespace", o.sessionsNamespace ?? "berth-sessions");
    if (system === sessions)
      throw new OptionError("sessionsNamespace", "must differ from systemNamespace (sessions run untrusted code)");
    check.count("operator.replicas", o.operator.replicas);
    const egress = check.cidrs("operator.sessionEgressAllow", o.operator.sessionEgressAllow ?? []);
    const sessionDomain = check.hostname("gateway.sessionDomain", o.gateway.sessionDomain);
    check.count("gateway.replicas", o.gateway.replicas);
    check.dnsLabel("gateway.cookieKeySecretName", o.gateway.cookieKeySecretName);
    if (o.gateway.tlsSecretName) check.dnsLabel("gateway.tlsSecretName", o.gateway.tlsSecretName);
    const tokenSecret = check.dnsLabel("operatorTokenSecretName", o.operatorTokenSecretName ?? "berth-operator-token");
    const logLevel = o.logLevel ?? "info";
    const builds = o.builds
      ? check.dnsLabel("builds.namespace", o.builds.namespace ?? DEFAULT_BUILDS_NAMESPACE)
      : undefined;
    if (builds === system || builds === sessions)
      throw new OptionError(
        "builds.namespace",
        `"${builds}" must differ from systemNamespace and sessionsNamespace (build pods run privileged-admitted)`,
      );

    const restricted = {
      "pod-security.kubernetes.io/enforce": "restricted",
      "pod-security.kubernetes.io/enforce-version": "latest",
      "pod-security.kubernetes.io/warn": "restricted",
      "pod-security.kubernetes.io/audit": "restricted",
    };
    for (const [key, name] of [
      ["system-namespace", system],
      ["sessions-namespace", sessions],
    ] as const)
      new ApiObject(this, key, {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name, labels: { ...restricted, ...labelsOf("berth") } },
      });
    if (builds)
      new ApiObject(this, "builds-namespace", {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: {
          name: builds,
          labels: {
            "pod-security.kubernetes.io/enforce": "privileged",
            "pod-security.kubernetes.io/warn": "restricted",
            "pod-security.kubernetes.io/warn-version": "latest",
            "pod-security.kubernetes.io/audit": "restricted",
            "pod-security.kubernetes.io/audit-version": "latest",
            ...labelsOf("berth"),
          },
        },
      });
    // Nothing in or out of the session namespace unless a policy allows it: the operator's per-session
    // policy (controllers/src/mirror/manifests.ts) opens DNS, public egress and the gateway's ingress.
    new ApiObject(this, "sessions-default-deny", {
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: { name: "default-deny", namespace: sessions, labels: labelsOf("berth") },
      spec: { podSelector: {}, policyTypes: ["Ingress", "Egress"] },
    });

    // --- the control plane's account on this cluster (its token goes into the registration)
    new ServiceAccountWithRules(this, "control-plane-account", {
      name: "berth-control-plane",
      namespace: system,
      rules: controlPlaneRules(sessions, builds),
      labels: labelsOf("berth-control-plane"),
    });
    // Its token, for the kubeconfig given at registration (the control plane runs in another cluster,
    // so no pod of this cluster mounts it). Rotate by deleting the Secret: the token controller refills it.
    new ApiObject(this, "control-plane-token", {
      apiVersion: "v1",
      kind: "Secret",
      type: "kubernetes.io/service-account-token",
      metadata: {
        name: "berth-control-plane-token",
        namespace: system,
        labels: labelsOf("berth-control-plane"),
        annotations: { "kubernetes.io/service-account.name": "berth-control-plane" },
      },
    });

    const tokenVolume = { name: "operator-token", secret: { secretName: tokenSecret, defaultMode: 0o440 } };
    const tokenMount = { name: "operator-token", mountPath: "/var/run/berth/operator", readOnly: true };
    const tokenFile = "/var/run/berth/operator/token";

    // --- operator
    const opLabels = labelsOf("berth-operator");
    const gwLabels = labelsOf("berth-gateway");
    const op = new ServiceAccountWithRules(this, "operator-account", {
      name: "berth-operator",
      namespace: system,
      rules: operatorRules(system, sessions, builds),
      labels: opLabels,
    });
    new ApiObject(this, "operator", {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "berth-operator", namespace: system, labels: opLabels },
      spec: {
        replicas: o.operator.replicas,
        selector: { matchLabels: opLabels },
        template: {
          metadata: { labels: opLabels },
          spec: podSpec({
            serviceAccountName: op.name,
            kubeApi: true,
            image: o.image,
            containers: [
              container({
                name: "operator",
                image: o.image,
                command: ENTRY.operator,
                env: [
                  { name: "BERTH_OPERATOR_IDENTITY", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
                  ...plain({
                    BERTH_OPERATOR_CLUSTER_ID: o.clusterId,
                    BERTH_OPERATOR_CONTROL_PLANE_URL: o.controlPlaneUrl,
                    BERTH_OPERATOR_TOKEN_FILE: tokenFile,
                    BERTH_OPERATOR_HTTP_PORT: String(OPERATOR_PORT),
                    BERTH_OPERATOR_LEASE_NAMESPACE: system,
                    BERTH_OPERATOR_LEASE_NAME: "berth-operator",
                    // Each gateway replica is read at its pod's `status` port (forwarding/gatewayReplicas.ts).
                    BERTH_OPERATOR_GATEWAY_NAMESPACE: system,
                    BERTH_OPERATOR_GATEWAY_SELECTOR: Object.entries(gwLabels)
                      .map(([k, v]) => `${k}=${v}`)
                      .join(","),
                    BERTH_OPERATOR_SESSION_EGRESS_ALLOW: egress.length ? egress.join(",") : undefined,
                    BERTH_OPERATOR_BUILDS_NAMESPACE: builds,
                    BERTH_OPERATOR_LOG_LEVEL: logLevel,
                  }),
                ],
                ports: [{ name: "status", containerPort: OPERATOR_PORT }],
                resources: o.operator.resources ?? OPERATOR_RESOURCES,
                health: { path: "/healthz", port: "status" },
                volumeMounts: [tokenMount],
              }),
            ],
            volumes: [tokenVolume],
          }),
        },
      },
    });

    // The operator's status port behind one name: the gateway follows GET /routes there (a follower
    // answers 503 and the gateway asks again, so it lands on the leader).
    service(this, "operator-service", {
      name: "berth-operator",
      namespace: system,
      labels: opLabels,
      port: { name: "status", port: OPERATOR_PORT },
      type: "ClusterIP",
    });

    // --- session gateway
    // The gateway calls only the control plane, never the Kubernetes API: an account with no grants, no token.
    new ServiceAccountWithRules(this, "gateway-account", {
      name: "berth-gateway",
      namespace: system,
      rules: { clusterRules: [], namespaceRules: [] },
      labels: gwLabels,
    });
    const tls = o.gateway.tlsSecretName;
    new ApiObject(this, "gateway", {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "berth-gateway", namespace: system, labels: gwLabels },
      spec: {
        replicas: o.gateway.replicas,
        selector: { matchLabels: gwLabels },
        template: {
          metadata: { labels: gwLabels },
          spec: podSpec({
            serviceAccountName: "berth-gateway",
            kubeApi: false,
            image: o.image,
            topologySpread: gwLabels,
            containers: [
              container({
                name: "gateway",
                image: o.image,
                command: ENTRY.gateway,
                env: plain({
                  BERTH_GATEWAY_CLUSTER_ID: o.clusterId,
                  BERTH_GATEWAY_CONTROL_PLANE_URL: o.controlPlaneUrl,
                  BERTH_GATEWAY_TOKEN_FILE: tokenFile,
                  BERTH_GATEWAY_PORT: String(GATEWAY_PORT),
                  BERTH_GATEWAY_TLS_CERT_FILE: tls ? "/var/run/berth/tls/tls.crt" : undefined,
                  BERTH_GATEWAY_TLS_KEY_FILE: tls ? "/var/run/berth/tls/tls.key" : undefined,
                  BERTH_GATEWAY_SECURE_COOKIES: "true",
                  BERTH_GATEWAY_COOKIE_KEY_FILE: "/var/run/berth/cookie/keys",
                  // Where each session pod answers: the operator's table, followed (no Service per session).
                  BERTH_GATEWAY_ROUTES_URL: `http://berth-operator.${system}.svc:${OPERATOR_PORT}/routes`,
                  BERTH_GATEWAY_WORKERS: "2",
                  BERTH_GATEWAY_STATUS_PORT: String(GATEWAY_STATUS_PORT),
                  BERTH_GATEWAY_LOG_LEVEL: logLevel,
                }),
                ports: [
                  { name: "https", containerPort: GATEWAY_PORT },
                  { name: "status", containerPort: GATEWAY_STATUS_PORT },
                ],
                resources: o.gateway.resources ?? GATEWAY_RESOURCES,
                health: { path: "/healthz", port: "https", scheme: tls ? "HTTPS" : "HTTP" },
                volumeMounts: [
                  tokenMount,
                  { name: "cookie-keys", mountPath: "/var/run/berth/cookie", readOnly: true },
                  ...(tls ? [{ name: "tls", mountPath: "/var/run/berth/tls", readOnly: true }] : []),
                ],
              }),
            ],
            volumes: [
              tokenVolume,
              { name: "cookie-keys", secret: { secretName: o.gateway.cookieKeySecretName, defaultMode: 0o440 } },
              ...(tls ? [{ name: "tls", secret: { secretName: tls, defaultMode: 0o440 } }] : []),
            ],
          }),
        },
      },
    });
    service(this, "gateway-service", {
      name: "berth-gateway",
      namespace: system,
      labels: gwLabels,
      // For external-dns and readers: the host this Service answers for.
      annotations: { "berth.dev/session-domain": sessionDomain },
      port: { name: "https", port: 443 },
      type: o.gateway.serviceType ?? "LoadBalancer",
    });
    // The status port is the operator's alone (it reads every replica's pod and forwards the figures,
    // docs/dev/monitoring.md); the session port stays open to everyone, as before this policy selected the
    // gateway's pods.
    ingressPolicy(this, "gateway-ingress-policy", {
      name: "berth-gateway",
      namespace: system,
      labels: gwLabels,
      ingress: [{ port: GATEWAY_PORT }, { port: GATEWAY_STATUS_PORT, from: [podsLabelled(opLabels)] }],
    });
    new ApiObject(this, "gateway-pdb", {
      apiVersion: "policy/v1",
      kind: "PodDisruptionBudget",
      metadata: { name: "berth-gateway", namespace: system, labels: gwLabels },
      spec: { maxUnavailable: 1, selector: { matchLabels: gwLabels } },
    });
  }
}
