// What every Berth pod shares: non-root, read-only root filesystem, no privilege escalation, no Linux
// capabilities, the runtime's seccomp profile (Pod Security "restricted"), a writable /tmp, and one
// image with an entry point per process.

/** Resource requests and limits, as Kubernetes quantities. */
export interface Resources {
  requests: { cpu: string; memory: string };
  limits: { cpu?: string; memory: string };
}

/** The codebase's image and how to pull it. */
export interface ImageOptions {
  /** e.g. `registry.example.com/berth:1.0.0`. */
  image: string;
  /** Default `IfNotPresent`. */
  pullPolicy?: "Always" | "IfNotPresent" | "Never";
  /** Secrets for a private registry. */
  pullSecrets?: string[];
}

/** The entry point of each process inside the one image (its working directory is the repository's root). */
export const ENTRY = {
  api: ["node", "api/src/main.ts"],
  worker: ["node", "api/src/worker-main.ts"],
  operator: ["node", "operator/src/main.ts"],
  gateway: ["node", "operator/src/gateway/main.ts"],
} as const;

const UID = 65532;

export const podSecurityContext = {
  runAsNonRoot: true,
  runAsUser: UID,
  runAsGroup: UID,
  fsGroup: UID,
  seccompProfile: { type: "RuntimeDefault" },
};

export const containerSecurityContext = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  capabilities: { drop: ["ALL"] },
};

export type Env = { name: string; value?: string; valueFrom?: unknown };

export const plain = (vars: Record<string, string | undefined>): Env[] =>
  Object.entries(vars)
    .filter((e): e is [string, string] => e[1] !== undefined)
    .map(([name, value]) => ({ name, value }));

export const fromSecret = (name: string, secret: string, key: string): Env => ({
  name,
  valueFrom: { secretKeyRef: { name: secret, key } },
});

export interface ContainerSpec {
  name: string;
  image: ImageOptions;
  command: readonly string[];
  env: Env[];
  ports: { name: string; containerPort: number }[];
  resources: Resources;
  /**
   * Probe path and port name, over HTTP unless `scheme` says HTTPS; or, for a process with no HTTP, a
   * port that accepts connections (not a command: an exec probe is a runtime exec, slow on a busy node).
   */
  health: { path: string; port: string; scheme?: "HTTP" | "HTTPS" } | { tcpPort: string };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
  /** Run before the container is sent SIGTERM (a process that needs another signal to stop promptly). */
  preStop?: readonly string[];
}

export function container(c: ContainerSpec) {
  const h = c.health;
  const probe =
    "tcpPort" in h
      ? { tcpSocket: { port: h.tcpPort } }
      : { httpGet: { path: h.path, port: h.port, scheme: h.scheme ?? "HTTP" } };
  return {
    name: c.name,
    image: c.image.image,
    imagePullPolicy: c.image.pullPolicy ?? "IfNotPresent",
    command: [...c.command],
    env: c.env,
    ports: c.ports.map((p) => ({ ...p, protocol: "TCP" })),
    resources: c.resources,
    // Kubernetes' default second per probe: a busy node (the install on two shared cores) missed it and
    // took a serving API out of its Service. A probe's answer is small; a slow one still means alive.
    readinessProbe: { ...probe, periodSeconds: 5, timeoutSeconds: 3, failureThreshold: 3 },
    livenessProbe: { ...probe, initialDelaySeconds: 10, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 6 },
    // Liveness starts once this first succeeds. The API and the worker wait up to 120 s for Postgres before
    // they serve (api/src/db/knex.ts DATABASE_WAIT_MS); liveness alone killed an API doing so while the
    // in-cluster Postgres restarted in an upgrade. 30 × 5 s outlasts the wait.
    startupProbe: { ...probe, periodSeconds: 5, timeoutSeconds: 3, failureThreshold: 30 },
    securityContext: containerSecurityContext,
    volumeMounts: [{ name: "tmp", mountPath: "/tmp" }, ...(c.volumeMounts ?? [])],
    ...(c.preStop ? { lifecycle: { preStop: { exec: { command: [...c.preStop] } } } } : {}),
  };
}

export interface PodSpecOptions {
  serviceAccountName: string;
  /** Only processes that call the Kubernetes API get a token. */
  kubeApi: boolean;
  image: ImageOptions;
  containers: ReturnType<typeof container>[];
  volumes?: unknown[];
  topologySpread?: Record<string, string>;
}

export function podSpec(o: PodSpecOptions) {
  return {
    serviceAccountName: o.serviceAccountName,
    automountServiceAccountToken: o.kubeApi,
    securityContext: podSecurityContext,
    enableServiceLinks: false,
    ...(o.image.pullSecrets?.length ? { imagePullSecrets: o.image.pullSecrets.map((name) => ({ name })) } : {}),
    ...(o.topologySpread
      ? {
          // Across zones and nodes; ScheduleAnyway so that a one-zone cluster still schedules.
          topologySpreadConstraints: ["topology.kubernetes.io/zone", "kubernetes.io/hostname"].map((topologyKey) => ({
            maxSkew: 1,
            topologyKey,
            whenUnsatisfiable: "ScheduleAnyway",
            labelSelector: { matchLabels: o.topologySpread },
          })),
        }
      : {}),
    containers: o.containers,
    volumes: [{ name: "tmp", emptyDir: { sizeLimit: "64Mi" } }, ...(o.volumes ?? [])],
  };
}

export const labelsOf = (component: string) => ({
  "app.kubernetes.io/name": component,
  "app.kubernetes.io/part-of": "berth",
});

/**
 * The spec of a one-replica StatefulSet whose pod keeps its data in one volume, `storage`, which outlives
 * the pod (size and class from the construct's options).
 */
export const storedStatefulSetSpec = (
  name: string,
  labels: Record<string, string>,
  pod: ReturnType<typeof podSpec>,
  storage: { size: string; storageClass?: string | undefined },
) => ({
  serviceName: name,
  replicas: 1,
  selector: { matchLabels: labels },
  template: { metadata: { labels }, spec: pod },
  volumeClaimTemplates: [
    {
      metadata: { name: "storage", labels },
      spec: {
        accessModes: ["ReadWriteOnce"],
        resources: { requests: { storage: storage.size } },
        ...(storage.storageClass ? { storageClassName: storage.storageClass } : {}),
      },
    },
  ],
});
