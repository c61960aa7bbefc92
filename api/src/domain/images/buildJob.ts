// What a build runs on a build cluster, as plain manifests (the worker applies them, api/src/worker/builds.ts):
//
// - the namespace (BERTH_BUILD_NAMESPACE, default berth-builds) with Pod Security `enforce: privileged`
//   and `warn/audit: restricted`. Rootless BuildKit runs as uid 1000 without privilege or added
//   capabilities, but it makes user and mount namespaces, which the default seccomp and AppArmor profiles
//   forbid: its container sets both to Unconfined, and `restricted` and `baseline` both refuse that. No
//   other workload belongs in this namespace;
// - a NetworkPolicy: no ingress; egress to DNS and the CIDRs of Berth's registry and package mirrors only
//   (BERTH_BUILD_EGRESS_CIDRS);
// - a ConfigMap holding the Dockerfile, and the Job: one pod, no retries, CPU/memory/disk limits, a
//   deadline, no service-account token, on a node without GPUs; it pushes to Berth's registry and prints
//   `BERTH_IMAGE_DIGEST=sha256:…` from BuildKit's metadata as its last line. Berth trusts that line only
//   as far as its own registry confirms it (the worker reads the manifest back).

import type { ImagesConfig } from "../../config.ts";

export const BUILD_LABEL = "berth.dev/image-build";
export const BUILD_COMPONENT = { "app.kubernetes.io/component": "image-build", "app.kubernetes.io/part-of": "berth" };
export const DIGEST_LINE = /BERTH_IMAGE_DIGEST=(sha256:[a-f0-9]{64})/g;

export interface BuildJobInput {
  buildId: string;
  jobName: string;
  dockerfile: string;
  /** The catalog base image's reference, given to the Dockerfile as ARG BASE_IMAGE. */
  baseReference: string | null;
  /** Where to push: <pull prefix>/<org>/<owner>/<name>:<tag>. */
  destination: string;
  insecureRegistry: boolean;
  /** A Secret with a .dockerconfigjson for Berth's registry, when it needs credentials. */
  pushSecret?: string;
}

export function buildNamespace(config: ImagesConfig["builds"]) {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name: config.namespace,
      labels: {
        "app.kubernetes.io/part-of": "berth",
        "pod-security.kubernetes.io/enforce": "privileged",
        "pod-security.kubernetes.io/warn": "restricted",
        "pod-security.kubernetes.io/audit": "restricted",
      },
    },
  };
}

export function buildNetworkPolicy(config: ImagesConfig["builds"]) {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name: "image-builds", namespace: config.namespace, labels: BUILD_COMPONENT },
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
        ...(config.egressCidrs.length > 0 ? [{ to: config.egressCidrs.map((cidr) => ({ ipBlock: { cidr } })) }] : []),
      ],
    },
  };
}

export function buildConfigMap(config: ImagesConfig["builds"], i: BuildJobInput) {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: i.jobName,
      namespace: config.namespace,
      labels: { ...BUILD_COMPONENT, [BUILD_LABEL]: i.buildId },
    },
    data: { Dockerfile: i.dockerfile },
  };
}

const SCRIPT = [
  "set -eu",
  'buildctl-daemonless.sh build --frontend dockerfile.v0 --local context=/work --local dockerfile=/work "$@" --metadata-file /tmp/metadata.json',
  'sed -n \'s/.*"containerimage.digest": *"\\(sha256:[a-f0-9]*\\)".*/BERTH_IMAGE_DIGEST=\\1/p\' /tmp/metadata.json',
].join("\n");

export function buildJob(config: ImagesConfig["builds"], i: BuildJobInput) {
  const output = `type=image,name=${i.destination},push=true${i.insecureRegistry ? ",registry.insecure=true" : ""}`;
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name: i.jobName,
      namespace: config.namespace,
      labels: { ...BUILD_COMPONENT, [BUILD_LABEL]: i.buildId },
    },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: config.timeoutSeconds,
      ttlSecondsAfterFinished: 3600,
      template: {
        metadata: { labels: { ...BUILD_COMPONENT, [BUILD_LABEL]: i.buildId } },
        spec: {
          restartPolicy: "Never",
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          // Builds never take a GPU node: only nodes without the GPU operator's count label.
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [{ matchExpressions: [{ key: "nvidia.com/gpu.count", operator: "DoesNotExist" }] }],
              },
            },
          },
          containers: [
            {
              name: "build",
              image: config.builderImage,
              command: ["sh", "-c", SCRIPT, "build"],
              args: [
                "--output",
                output,
                ...(i.baseReference ? ["--opt", `build-arg:BASE_IMAGE=${i.baseReference}`] : []),
              ],
              env: [{ name: "BUILDKITD_FLAGS", value: "--oci-worker-no-process-sandbox" }],
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
                ...(i.pushSecret ? [{ name: "push", mountPath: "/home/user/.docker", readOnly: true }] : []),
              ],
            },
          ],
          volumes: [
            { name: "dockerfile", configMap: { name: i.jobName } },
            { name: "buildkit", emptyDir: { sizeLimit: "20Gi" } },
            ...(i.pushSecret
              ? [
                  {
                    name: "push",
                    secret: { secretName: i.pushSecret, items: [{ key: ".dockerconfigjson", path: "config.json" }] },
                  },
                ]
              : []),
          ],
        },
      },
    },
  };
}

/** The digest the build printed last, if any. */
export function reportedDigest(log: string): string | undefined {
  let last: string | undefined;
  for (const m of log.matchAll(DIGEST_LINE)) last = m[1];
  return last;
}
