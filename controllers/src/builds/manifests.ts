// What an ImageBuild becomes on its build cluster, as plain manifests (the operator applies them,
// controllers/src/builds/controller.ts):
//
// - the namespace's NetworkPolicy: no ingress; egress to DNS and the CIDRs the build names (Berth's
//   registry and package mirrors) only. The namespace itself comes with the operator's install, with Pod
//   Security `enforce: privileged` and `warn/audit: restricted` (docs/dev/images.md says why);
// - a ConfigMap holding the Dockerfile, and the Job: one pod, no retries, CPU/memory/disk limits, a
//   deadline, no service-account token, on a node without GPUs; it pushes to Berth's registry and prints
//   `BERTH_IMAGE_DIGEST=sha256:…` from BuildKit's metadata as its last line. Berth trusts that line only
//   as far as its own registry confirms it (the worker reads the manifest back). Both are owned by the
//   ImageBuild, so the garbage collector removes them too when it goes.
import { GPU_COUNT_LABEL, type ImageBuild } from "@berth/crds";

export const BUILD_LABEL = "berth.dev/image-build";
export const BUILD_COMPONENT = { "app.kubernetes.io/component": "image-build", "app.kubernetes.io/part-of": "berth" };
export const BUILD_SELECTOR = "app.kubernetes.io/component=image-build";
export const BUILD_POLICY = "image-builds";

export function buildNetworkPolicy(namespace: string, egressCidrs: readonly string[]) {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name: BUILD_POLICY, namespace, labels: BUILD_COMPONENT },
    spec: {
      podSelector: { matchLabels: BUILD_COMPONENT },
      policyTypes: ["Ingress", "Egress"],
      ingress: [],
      egress: [
        {
          ports: [
            { protocol: "UDP", port: 53 },
            { protocol: "TCP", port: 53 },
          ],
        },
        ...(egressCidrs.length > 0 ? [{ to: egressCidrs.map((cidr) => ({ ipBlock: { cidr } })) }] : []),
      ],
    },
  };
}

type Built = Pick<ImageBuild, "spec"> & { metadata: { name: string; namespace?: string; uid?: string } };

function ownedBy(b: Built) {
  return b.metadata.uid
    ? [
        {
          apiVersion: "berth.dev/v1alpha1",
          kind: "ImageBuild",
          name: b.metadata.name,
          uid: b.metadata.uid,
          controller: true,
        },
      ]
    : [];
}

function meta(b: Built, namespace: string) {
  return {
    name: b.metadata.name,
    namespace,
    labels: { ...BUILD_COMPONENT, [BUILD_LABEL]: b.spec.buildId },
    ownerReferences: ownedBy(b),
  };
}

export function buildConfigMap(b: Built, namespace: string) {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: meta(b, namespace), data: { Dockerfile: b.spec.dockerfile } };
}

const SCRIPT = [
  "set -eu",
  'buildctl-daemonless.sh build --frontend dockerfile.v0 --local context=/work --local dockerfile=/work "$@" --metadata-file /tmp/metadata.json',
  'sed -n \'s/.*"containerimage.digest": *"\\(sha256:[a-f0-9]*\\)".*/BERTH_IMAGE_DIGEST=\\1/p\' /tmp/metadata.json',
].join("\n");

/** Where builds run: nodes with all these labels (the operator's BERTH_OPERATOR_BUILDS_NODE_SELECTOR). */
export type BuildNodeSelector = Readonly<Record<string, string>>;

/** The registry host of an image reference (`host[:port]/path:tag`). */
const registryHost = (ref: string) => ref.slice(0, ref.indexOf("/"));

export function buildJob(b: Built, namespace: string, nodeSelector?: BuildNodeSelector) {
  const s = b.spec;
  const output = `type=image,name=${s.destination},push=true${s.insecureRegistry ? ",registry.insecure=true" : ""}`;
  const selected = nodeSelector && Object.keys(nodeSelector).length > 0 ? Object.entries(nodeSelector) : undefined;
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: meta(b, namespace),
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: s.timeoutSeconds,
      ttlSecondsAfterFinished: 3600,
      template: {
        metadata: { labels: { ...BUILD_COMPONENT, [BUILD_LABEL]: s.buildId } },
        spec: {
          restartPolicy: "Never",
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          // Builds never take a GPU node: only nodes without the GPU operator's count label. Unless the
          // operator names the build nodes itself (BERTH_OPERATOR_BUILDS_NODE_SELECTOR), which replaces it;
          // such a pool is often tainted with its own label, which the pod then tolerates.
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [
                  {
                    matchExpressions: selected
                      ? selected.map(([key, value]) => ({ key, operator: "In", values: [value] }))
                      : [{ key: GPU_COUNT_LABEL, operator: "DoesNotExist" }],
                  },
                ],
              },
            },
          },
          ...(selected
            ? {
                tolerations: selected.map(([key, value]) => ({
                  key,
                  operator: "Equal",
                  value,
                  effect: "NoSchedule",
                })),
              }
            : {}),
          containers: [
            {
              name: "build",
              image: s.builderImage,
              command: ["sh", "-c", SCRIPT, "build"],
              args: ["--output", output, ...(s.baseImage ? ["--opt", `build-arg:BASE_IMAGE=${s.baseImage}`] : [])],
              env: [
                { name: "BUILDKITD_FLAGS", value: "--oci-worker-no-process-sandbox" },
                // A plain-HTTP registry is one for the base image's pull too, not only the push (Berth's
                // builder image reads it: cdk8s/src/image/builder/buildctl-daemonless.sh).
                ...(s.insecureRegistry
                  ? [{ name: "BERTH_INSECURE_REGISTRIES", value: registryHost(s.destination) }]
                  : []),
              ],
              securityContext: {
                runAsUser: 1000,
                runAsGroup: 1000,
                runAsNonRoot: true,
                seccompProfile: { type: "Unconfined" },
                appArmorProfile: { type: "Unconfined" },
              },
              resources: {
                requests: { cpu: "500m", memory: "1Gi", "ephemeral-storage": "5Gi" },
                limits: { cpu: "2", memory: "4Gi", "ephemeral-storage": "20Gi" },
              },
              volumeMounts: [
                { name: "dockerfile", mountPath: "/work" },
                { name: "buildkit", mountPath: "/home/user/.local/share/buildkit" },
                ...(s.pushSecret ? [{ name: "push", mountPath: "/home/user/.docker", readOnly: true }] : []),
              ],
            },
          ],
          volumes: [
            { name: "dockerfile", configMap: { name: b.metadata.name } },
            { name: "buildkit", emptyDir: { sizeLimit: "20Gi" } },
            ...(s.pushSecret
              ? [
                  {
                    name: "push",
                    secret: { secretName: s.pushSecret, items: [{ key: ".dockerconfigjson", path: "config.json" }] },
                  },
                ]
              : []),
          ],
        },
      },
    },
  };
}

/**
 * What the build controller does in the builds namespace, as RBAC rules (the operator's grants include
 * them on a build cluster, operator/src/rbac.ts).
 */
export const BUILD_CONTROLLER_RULES = [
  // The ImageBuilds the control plane writes: watched, never changed (reports go to /internal).
  { apiGroups: ["berth.dev"], resources: ["imagebuilds"], verbs: ["list", "watch"] },
  // Each build's Job: created (read back after a 409), watched, deleted on cancel.
  { apiGroups: ["batch"], resources: ["jobs"], verbs: ["get", "list", "watch", "create", "delete"] },
  // The Dockerfile's ConfigMap (server-side apply: patch, and create for the first apply), deleted with the Job.
  { apiGroups: [""], resources: ["configmaps"], verbs: ["create", "patch", "delete"] },
  // The build pods' phases, and their logs, followed.
  { apiGroups: [""], resources: ["pods"], verbs: ["list", "watch"] },
  { apiGroups: [""], resources: ["pods/log"], verbs: ["get"] },
  // The namespace's egress-only policy (server-side apply).
  { apiGroups: ["networking.k8s.io"], resources: ["networkpolicies"], verbs: ["create", "patch"] },
];
