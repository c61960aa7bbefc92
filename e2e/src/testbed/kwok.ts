// kwok's configuration for a GPU cluster: one KwokConfiguration, the Stage documents that play the
// kubelet's part, and a ClusterLogs document that serves one CRI log file for every pod.
//
// Traps: standalone kwok applies none of its documented defaults, so every option below is spelled out
// (nodeLeaseParallelism 0 exits, enableDebuggingHandlers off answers pods/log with 405); with no Stage
// documents it exits with "no stages found"; the log file must be in CRI format.
import { writeFileSync } from "node:fs";
import { stringify } from "yaml";

export interface KwokConfigInput {
  port: number;
  tlsCertFile: string;
  tlsKeyFile: string;
  podLogFile: string;
  /** Pod IPs are data only: nothing connects to them. */
  podCidr: string;
}

const STAGE_API = "kwok.x-k8s.io/v1alpha1";

function stage(name: string, kind: "Node" | "Pod", matchExpressions: object[], next: object, delay?: object): object {
  return {
    apiVersion: STAGE_API,
    kind: "Stage",
    metadata: { name },
    spec: { resourceRef: { apiGroup: "v1", kind }, selector: { matchExpressions }, ...(delay ? { delay } : {}), next },
  };
}

const readyStatus = '.status.conditions.[] | select( .type == "Ready" ) | .status';

// Conditions and endpoints a kubelet reports; the apiserver dials daemonEndpoints for pods/log, so it
// must be kwok's own port on 127.0.0.1 (NodeIP, NodePort).
const nodeHeartbeat = `{{ $now := Now }}
{{ $since := or .metadata.creationTimestamp $now }}
conditions:
{{ range NodeConditions }}
- type: {{ .type | Quote }}
  status: {{ .status | Quote }}
  reason: {{ .reason | Quote }}
  message: {{ .message | Quote }}
  lastHeartbeatTime: {{ $now | Quote }}
  lastTransitionTime: {{ $since | Quote }}
{{ end }}
addresses:
- type: InternalIP
  address: {{ NodeIP | Quote }}
- type: Hostname
  address: {{ NodeName | Quote }}
daemonEndpoints:
  kubeletEndpoint:
    Port: {{ NodePort }}
`;

const nodeInitialize = `${nodeHeartbeat}nodeInfo:
  architecture: amd64
  operatingSystem: linux
  osImage: "Berth test bed (kwok)"
  kernelVersion: {{ printf "kwok-%s" Version | Quote }}
  kubeletVersion: {{ printf "kwok-%s" Version | Quote }}
  containerRuntimeVersion: {{ printf "kwok-%s" Version | Quote }}
  machineID: ""
  systemUUID: ""
  bootID: ""
phase: Running
`;

// Every container starts at once and is ready; init containers have completed (sidecars run).
const podRunning = `{{ $now := Now }}
conditions:
- type: Initialized
  status: "True"
  lastTransitionTime: {{ $now | Quote }}
- type: ContainersReady
  status: "True"
  lastTransitionTime: {{ $now | Quote }}
- type: Ready
  status: "True"
  lastTransitionTime: {{ $now | Quote }}
{{ range .spec.readinessGates }}
- type: {{ .conditionType | Quote }}
  status: "True"
  lastTransitionTime: {{ $now | Quote }}
{{ end }}
containerStatuses:
{{ range .spec.containers }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  ready: true
  started: true
  restartCount: 0
  state:
    running:
      startedAt: {{ $now | Quote }}
{{ end }}
initContainerStatuses:
{{ range .spec.initContainers }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  ready: true
  restartCount: 0
{{ if eq .restartPolicy "Always" }}
  started: true
  state:
    running:
      startedAt: {{ $now | Quote }}
{{ else }}
  state:
    terminated:
      exitCode: 0
      reason: Completed
      startedAt: {{ $now | Quote }}
      finishedAt: {{ $now | Quote }}
{{ end }}
{{ end }}
{{ with NodeIPsWith .spec.nodeName }}
hostIP: {{ index . 0 | Quote }}
hostIPs:
{{ range . }}
- ip: {{ . | Quote }}
{{ end }}
{{ end }}
{{ with PodIPsWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) }}
podIP: {{ index . 0 | Quote }}
podIPs:
{{ range . }}
- ip: {{ . | Quote }}
{{ end }}
{{ end }}
phase: Running
startTime: {{ $now | Quote }}
`;

// A Job's pod runs to completion at once, so Jobs finish; other pods run until deleted.
const podSucceeded = `{{ $now := Now }}
containerStatuses:
{{ range .spec.containers }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  ready: false
  started: false
  restartCount: 0
  state:
    terminated:
      exitCode: 0
      reason: Completed
      startedAt: {{ $now | Quote }}
      finishedAt: {{ $now | Quote }}
{{ end }}
phase: Succeeded
`;

export function kwokStages(): object[] {
  return [
    stage("node-initialize", "Node", [{ key: readyStatus, operator: "NotIn", values: ["True"] }], {
      statusTemplate: nodeInitialize,
    }),
    // kwok renews the node Leases itself (nodeLeaseDurationSeconds); the status heartbeat only needs to
    // be occasional, as a kubelet's nodeStatusReportFrequency is.
    stage(
      "node-heartbeat-with-lease",
      "Node",
      [
        { key: ".status.phase", operator: "In", values: ["Running"] },
        { key: readyStatus, operator: "In", values: ["True"] },
      ],
      { statusTemplate: nodeHeartbeat },
      { durationMilliseconds: 300_000, jitterDurationMilliseconds: 330_000 },
    ),
    stage(
      "pod-ready",
      "Pod",
      [
        { key: ".metadata.deletionTimestamp", operator: "DoesNotExist" },
        { key: ".spec.nodeName", operator: "Exists" },
        { key: ".status.phase", operator: "In", values: ["Pending"] },
        { key: readyStatus, operator: "NotIn", values: ["True"] },
      ],
      { statusTemplate: podRunning },
    ),
    stage(
      "pod-complete",
      "Pod",
      [
        { key: ".metadata.deletionTimestamp", operator: "DoesNotExist" },
        { key: ".status.phase", operator: "In", values: ["Running"] },
        { key: ".metadata.ownerReferences.[].kind", operator: "In", values: ["Job"] },
      ],
      { statusTemplate: podSucceeded },
    ),
    stage("pod-delete", "Pod", [{ key: ".metadata.deletionTimestamp", operator: "Exists" }], { delete: true }),
  ];
}

export function kwokConfiguration(input: KwokConfigInput): object {
  return {
    apiVersion: "config.kwok.x-k8s.io/v1alpha1",
    kind: "KwokConfiguration",
    options: {
      manageNodesWithAnnotationSelector: "kwok.x-k8s.io/node=fake",
      nodeIP: "127.0.0.1",
      nodePort: input.port,
      serverAddress: `127.0.0.1:${input.port}`,
      tlsCertFile: input.tlsCertFile,
      tlsPrivateKeyFile: input.tlsKeyFile,
      cidr: input.podCidr,
      nodeLeaseDurationSeconds: 40,
      nodeLeaseParallelism: 4,
      podPlayStageParallelism: 4,
      nodePlayStageParallelism: 4,
      podsOnNodeSyncParallelism: 1,
      enablePodsOnNodeSyncListPager: true,
      enablePodsOnNodeSyncStreamWatch: false,
      enableDebuggingHandlers: true,
    },
  };
}

export function kwokClusterLogs(podLogFile: string): object {
  return {
    apiVersion: STAGE_API,
    kind: "ClusterLogs",
    metadata: { name: "berth-testbed-pod-logs" },
    spec: { selector: {}, logs: [{ containers: [], logsFile: podLogFile, follow: true }] },
  };
}

export function writeKwokConfig(file: string, input: KwokConfigInput): void {
  const docs = [kwokConfiguration(input), ...kwokStages(), kwokClusterLogs(input.podLogFile)];
  writeFileSync(file, docs.map((d) => stringify(d, { lineWidth: 0 })).join("---\n"));
}

/** CRI log format, one line each: `<RFC3339Nano> stdout F <text>` (plain lines: "unsupported log format"). */
export function criLogLines(lines: readonly string[], start = new Date()): string {
  return lines
    .map((text, i) => {
      const iso = new Date(start.getTime() + i).toISOString(); // 2026-11-22T06:00:00.000Z
      return `${iso.slice(0, -1)}000000Z stdout F ${text}\n`;
    })
    .join("");
}
