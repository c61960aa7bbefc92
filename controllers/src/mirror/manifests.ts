// What a SessionMirror becomes in its GPU cluster: one Pod, named after the mirror (deterministic: a
// restart, a retry or a second operator replica can only ever collide with the same name, never make a
// second pod) and owned by it (deleting the mirror removes it through the cluster's garbage collector even
// when the operator is down); no Service (the gateway follows the pod's address, mirror/routes.ts); and the sessions namespace's
// one NetworkPolicy that admits only the gateway to every session pod.
import {
  API_VERSION,
  DEFAULT_GATEWAY_NAMESPACE,
  GATEWAY_POD_LABELS,
  GPU_PRODUCT_LABEL,
  GPU_RESOURCE,
  HAMI,
  LABELS,
  labelValue,
  MIG_RESOURCE_PREFIX,
  OPERATOR_POD_LABELS,
  type SessionMirror,
} from "@berth/crds";

export const GPU_RUNTIME_CLASS = "nvidia";

/** The port each kind of application listens on inside the pod, named `http` (the gateway's route, mirror/routes.ts). */
export const APP_PORTS = { jupyterlab: 8888, "code-server": 8080, terminal: 7681 } as const;

/**
 * What answers 200 under the base path once each kind of application serves (docs/dev/session-images.md):
 * the pod's readiness probe, so a session is Running when its app answers, not when its process started
 * (mirror/plan.ts reports Running on the pod's Ready condition; the gateway's route waits for it too).
 */
/**
 * How each kind says it is ready. Jupyter Server answers `{base}api` wherever it runs; the terminal and
 * code-server images people bring (upstream ttyd and code-server among them) share no such path under
 * Berth's base, so for them a listening port is the readiness the kubelet can check.
 */
export const READINESS = {
  jupyterlab: { path: "api" },
  "code-server": { tcp: true },
  terminal: { tcp: true },
} as const satisfies Record<string, { path: string } | { tcp: true }>;

/** What the probe asks, in words (a failed start's message). */
export function readinessInWords(kind: keyof typeof READINESS, base: string): string {
  const r: { path?: string; tcp?: true } = READINESS[kind];
  return r.path ? `GET ${base}${r.path} on its port ${APP_PORTS[kind]}` : `a connection to its port ${APP_PORTS[kind]}`;
}

export interface MirrorManifestOptions {
  namespace: string;
  /** Namespace of the cluster's session gateway; its pods are the only ones admitted. */
  gatewayNamespace?: string;
  gatewayPodLabels?: Record<string, string>;
  /** Namespace of the operator, which reads the notebook server's status (default: berth-system). */
  operatorNamespace?: string;
  runtimeClassName?: string;
  /** CIDRs session pods may reach although private (a package mirror, a node-local DNS cache). */
  egressAllow?: readonly string[];
  /** A volume's claim not bound after this long fails the session (ClaimNotBound) instead of waiting on. */
  claimBindTimeoutMs?: number;
  /** A started app not Ready (its readiness probe) after this long fails the session instead of starting on. */
  appReadyTimeoutMs?: number;
}

/** The annotation a volume's claim carries: where its data sits on the pool (the provisioner's volume handle). */
export const DATA_PATH_ANNOTATION = "berth.dev/data-path";

export type MirrorVolume = SessionMirror["spec"]["volumes"][number];

/**
 * A volume's claim on this cluster. Not owned by the mirror: it outlives the session, and is released
 * when no session has used it for a while. Its name and data path come from the volume id alone, so a
 * claim made again (here or on another cluster) reaches the same data; a second create only gets 409.
 */
export function claimManifest(v: MirrorVolume, opts: MirrorManifestOptions) {
  return {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: {
      name: v.claimName,
      namespace: opts.namespace,
      labels: {
        [LABELS.partOf]: "berth",
        [LABELS.managedBy]: "berth-operator",
        ...(v.volumeId ? { [LABELS.volumeId]: v.volumeId } : {}),
      },
      annotations: { ...(v.dataPath ? { [DATA_PATH_ANNOTATION]: v.dataPath } : {}) },
    },
    spec: {
      accessModes: ["ReadWriteMany"],
      storageClassName: v.storageClass,
      resources: { requests: { storage: `${v.sizeGb ?? 1}Gi` } },
    },
  };
}

export interface KubeObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  deletionTimestamp?: string;
  creationTimestamp?: string;
  ownerReferences?: {
    apiVersion: string;
    kind: string;
    name: string;
    uid: string;
    controller?: boolean;
    blockOwnerDeletion?: boolean;
  }[];
}

export function sessionLabels(m: SessionMirror): Record<string, string> {
  return {
    [LABELS.name]: "berth-session",
    [LABELS.component]: m.spec.imageKind,
    [LABELS.managedBy]: "berth-operator",
    [LABELS.partOf]: "berth",
    [LABELS.session]: m.metadata.name as string,
    [LABELS.sessionId]: labelValue(m.spec.sessionId),
    [LABELS.owner]: labelValue(m.spec.owner),
    [LABELS.organization]: labelValue(m.spec.organization),
    ...(m.spec.project ? { [LABELS.project]: labelValue(m.spec.project) } : {}),
  };
}

function ownerReference(m: SessionMirror) {
  return {
    apiVersion: API_VERSION,
    kind: "SessionMirror",
    name: m.metadata.name as string,
    uid: m.metadata.uid as string,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/**
 * What the pod asks for its GPUs. Without a sharing layer: `nvidia.com/gpu` cards, any of the model's nodes.
 * With HAMi (docs/dev/gpu-sharing.md): a slice asks one vGPU with its memory (MiB) and core percentage, a
 * whole card asks all its cores (HAMi then gives it to no one else); either way the pod is pinned to the
 * node and cards placement chose (`nvidia.com/use-gpuuuid`; the hostname selector keeps a scheduler that
 * does not read it, such as the test bed's, on the same node).
 */
export function gpuRequestOf(r: SessionMirror["spec"]["resources"]): {
  resources: Record<string, string>;
  annotations: Record<string, string>;
  nodeSelector: Record<string, string>;
} {
  const nodeSelector: Record<string, string> = { [GPU_PRODUCT_LABEL]: r.gpuModel };
  // A MIG instance: the device plugin's resource for the profile; the kube-scheduler puts the pod only on a
  // node with one free, so no pin is needed.
  if (r.migProfile)
    return { resources: { [`${MIG_RESOURCE_PREFIX}${r.migProfile}`]: "1" }, annotations: {}, nodeSelector };
  if (r.gpuSharing !== "hami" || !r.gpuAssignment)
    return { resources: { [GPU_RESOURCE]: String(r.gpuCount) }, annotations: {}, nodeSelector };
  const resources: Record<string, string> = r.gpuSlice
    ? {
        [HAMI.vgpuResource]: "1",
        [HAMI.memoryResource]: String(r.gpuSlice.memoryMib),
        [HAMI.coresResource]: String(r.gpuSlice.cores),
      }
    : { [HAMI.vgpuResource]: String(r.gpuAssignment.cards.length), [HAMI.coresResource]: "100" };
  return {
    resources,
    annotations: { [HAMI.useUuidAnnotation]: r.gpuAssignment.cards.join(",") },
    nodeSelector: { ...nodeSelector, "kubernetes.io/hostname": r.gpuAssignment.node },
  };
}

/**
 * Nodes of pools not granted to the session, as a required node affinity: one term whose NotIn expressions
 * must all hold (a node without the label matches NotIn), so no pool's node is a candidate.
 */
export function nodeAffinityOf(avoid: SessionMirror["spec"]["resources"]["avoidNodeLabels"]) {
  if (!avoid || avoid.length === 0) return {};
  return {
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchExpressions: avoid.map((a) => ({ key: a.key, operator: "NotIn", values: [...a.values] })) },
          ],
        },
      },
    },
  };
}

function readinessAction(kind: keyof typeof READINESS, base: string) {
  const r: { path?: string; tcp?: true } = READINESS[kind];
  return r.path
    ? { httpGet: { path: `${base}${r.path}`, port: "http", scheme: "HTTP" } }
    : { tcpSocket: { port: "http" } };
}

export function podManifest(m: SessionMirror, opts: MirrorManifestOptions) {
  const name = m.metadata.name as string;
  const port = APP_PORTS[m.spec.imageKind];
  const basePath = `/proxy/${name}/`;
  const { cpu, memory } = m.spec.resources;
  const gpu = gpuRequestOf(m.spec.resources);
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace: opts.namespace,
      labels: { ...sessionLabels(m), [LABELS.restart]: String(m.spec.restartCount) },
      annotations: { "berth.dev/revision": String(m.spec.revision), ...gpu.annotations },
      ownerReferences: [ownerReference(m)],
    },
    spec: {
      runtimeClassName: opts.runtimeClassName ?? GPU_RUNTIME_CLASS,
      // Session code is untrusted: no token for the cluster's API, no service links into the namespace.
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 30,
      nodeSelector: gpu.nodeSelector,
      ...nodeAffinityOf(m.spec.resources.avoidNodeLabels),
      tolerations: [{ key: GPU_RESOURCE, operator: "Exists", effect: "NoSchedule" }],
      // The "restricted" Pod Security Standard, as the namespace enforces it.
      securityContext: {
        runAsNonRoot: true,
        runAsUser: 1000,
        runAsGroup: 100,
        fsGroup: 100,
        seccompProfile: { type: "RuntimeDefault" },
      },
      containers: [
        {
          name: "session",
          image: m.spec.image,
          imagePullPolicy: "IfNotPresent",
          ports: [{ name: "http", containerPort: port, protocol: "TCP" }],
          // Asked every 2 s from the start, so Ready follows the app's first answer closely. Lenient after:
          // a busy node (or a busy kernel's server) slow to answer for half a minute is not a session that
          // stopped serving (an unready pod loses its route and its session reads Starting again).
          readinessProbe: {
            ...readinessAction(m.spec.imageKind, basePath),
            periodSeconds: 2,
            timeoutSeconds: 5,
            failureThreshold: 15,
          },
          env: [
            { name: "BERTH_SESSION_ID", value: m.spec.sessionId },
            { name: "BERTH_BASE_PATH", value: basePath },
            // Kubeflow's convention, which the common notebook and code-server images honour.
            { name: "NB_PREFIX", value: basePath.replace(/\/$/, "") },
            { name: "BERTH_PORT", value: String(port) },
          ],
          resources: {
            requests: { cpu, memory, ...gpu.resources } as Record<string, string>,
            limits: { cpu, memory, ...gpu.resources } as Record<string, string>,
          },
          securityContext: {
            allowPrivilegeEscalation: false,
            privileged: false,
            runAsNonRoot: true,
            capabilities: { drop: ["ALL"] },
            seccompProfile: { type: "RuntimeDefault" },
          },
          volumeMounts: m.spec.volumes.map((v, i) => ({
            name: `vol-${i}`,
            mountPath: v.mountPath,
            readOnly: v.readOnly,
          })),
        },
      ],
      volumes: m.spec.volumes.map((v, i) => ({
        name: `vol-${i}`,
        persistentVolumeClaim: { claimName: v.claimName, readOnly: v.readOnly },
      })),
    },
  };
}

/** Private, shared, link-local and loopback ranges: what a session pod may not reach. */
const PRIVATE_IPV4 = [
  "10.0.0.0/8",
  "100.64.0.0/10",
  "127.0.0.0/8",
  "169.254.0.0/16",
  "172.16.0.0/12",
  "192.168.0.0/16",
];
const PRIVATE_IPV6 = ["::1/128", "fc00::/7", "fe80::/10"];

/** The namespace's one NetworkPolicy for every session pod (mirror/plan.ts `planSessionsPolicy`). */
export const SESSIONS_POLICY_NAME = "berth-sessions-gateway-only";

/**
 * One policy for the whole sessions namespace: it selects every session pod (the label all of them
 * carry) and admits only the session gateway's and the operator's pods, only on the pod's `http` port. Each pod names its
 * application's port `http` (8888, 8080 or 7681 by kind), so the named port is exactly the per-session
 * rule of earlier versions (one policy per session, on its numeric port) without a write per session.
 * Everything else is denied: a policy of type Ingress that selects a pod makes it default-deny; Egress
 * likewise, but for DNS and public addresses.
 * Not owned by any mirror: the operator creates it before any session pod and recreates it if deleted.
 */
export function sessionsNetworkPolicyManifest(opts: MirrorManifestOptions) {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: {
      name: SESSIONS_POLICY_NAME,
      namespace: opts.namespace,
      labels: { [LABELS.managedBy]: "berth-operator", [LABELS.partOf]: "berth" },
    },
    spec: {
      podSelector: { matchLabels: { [LABELS.name]: "berth-session" } },
      policyTypes: ["Ingress", "Egress"],
      // Out: the cluster's DNS, and public addresses (package indexes, datasets). Not private ranges: the
      // cluster's pods and services (the operator, the gateway, other sessions), a control plane on a
      // private network, cloud metadata. A session is untrusted code (docs/dev/sessions.md).
      egress: [
        {
          to: [{ namespaceSelector: {}, podSelector: { matchLabels: { "k8s-app": "kube-dns" } } }],
          ports: [
            { protocol: "UDP", port: 53 },
            { protocol: "TCP", port: 53 },
          ],
        },
        {
          to: [
            { ipBlock: { cidr: "0.0.0.0/0", except: [...PRIVATE_IPV4] } },
            { ipBlock: { cidr: "::/0", except: [...PRIVATE_IPV6] } },
          ],
        },
        ...(opts.egressAllow?.length ? [{ to: opts.egressAllow.map((cidr) => ({ ipBlock: { cidr } })) }] : []),
      ],
      ingress: [
        {
          from: [
            {
              namespaceSelector: {
                matchLabels: { "kubernetes.io/metadata.name": opts.gatewayNamespace ?? DEFAULT_GATEWAY_NAMESPACE },
              },
              podSelector: { matchLabels: opts.gatewayPodLabels ?? { ...GATEWAY_POD_LABELS } },
            },
            // The operator asks the notebook server whether a kernel is busy (the idle rule,
            // docs/dev/idle-and-limits.md); it runs beside the gateway.
            {
              namespaceSelector: {
                matchLabels: { "kubernetes.io/metadata.name": opts.operatorNamespace ?? DEFAULT_GATEWAY_NAMESPACE },
              },
              podSelector: { matchLabels: { ...OPERATOR_POD_LABELS } },
            },
          ],
          ports: [{ protocol: "TCP", port: "http" }],
        },
      ],
    },
  };
}
