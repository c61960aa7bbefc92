// The control plane's metrics server (docs/adr/0010-metrics-server.md): VictoriaMetrics single-node in the
// management cluster, a StatefulSet with one volume. Only the API talks to it (queries for panels; imports
// of what operators forward through the internal plane), so its NetworkPolicy admits the API alone; it
// scrapes the API's and the worker's metrics listeners, found by pod labels in its own namespace.
import { ApiObject } from "cdk8s";
import { Construct } from "constructs";
import { ingressPolicy, podsLabelled, service } from "./network.ts";
import * as check from "./options.ts";
import { OptionError } from "./options.ts";
import { container, type ImageOptions, labelsOf, podSpec, type Resources, storedStatefulSetSpec } from "./pod.ts";
import { ServiceAccountWithRules } from "./rbac.ts";

export interface MetricsServerOptions {
  /** Default `victoriametrics/victoria-metrics:v1.151.0` (the version the test bed builds). */
  image?: ImageOptions;
  /** The volume's size, e.g. `50Gi` (4,000 cards at 15 s keep ~1 GB a month; see docs/dev/monitoring.md). */
  storageSize: string;
  storageClass?: string;
  /** How long samples are kept, e.g. `30d`, `90d`. */
  retention?: string;
  resources?: Resources;
}

export const METRICS_SERVER_PORT = 8428;
export const METRICS_SERVER_IMAGE = "victoriametrics/victoria-metrics:v1.151.0";
export const METRICS_SERVER_RESOURCES: Resources = {
  requests: { cpu: "250m", memory: "512Mi" },
  limits: { cpu: "2", memory: "2Gi" },
};

/** Pods of the namespace scraped by label (the process's metrics port is named `metrics`). */
function scrapeConfig(ns: string, jobs: { job: string; labels: Record<string, string> }[]): string {
  const lines = ["scrape_configs:"];
  for (const j of jobs) {
    lines.push(
      `  - job_name: ${j.job}`,
      "    kubernetes_sd_configs:",
      `      - role: pod`,
      `        namespaces: { names: [${ns}] }`,
      "    relabel_configs:",
      ...Object.entries(j.labels).flatMap(([k, v]) => [
        `      - source_labels: [__meta_kubernetes_pod_label_${k.replace(/[^a-zA-Z0-9_]/g, "_")}]`,
        "        action: keep",
        `        regex: ${v}`,
      ]),
      "      - source_labels: [__meta_kubernetes_pod_container_port_name]",
      "        action: keep",
      "        regex: metrics",
      "      - source_labels: [__meta_kubernetes_pod_name]",
      "        target_label: pod",
    );
  }
  return `${lines.join("\n")}\n`;
}

export class MetricsServer extends Construct {
  /** What the API's BERTH_METRICS_SERVER_URL is set to. */
  readonly url: string;
  constructor(
    scope: Construct,
    id: string,
    o: MetricsServerOptions & {
      namespace: string;
      apiLabels: Record<string, string>;
      scrape: { job: string; labels: Record<string, string> }[];
    },
  ) {
    super(scope, id);
    const ns = o.namespace;
    check.size("metrics.storageSize", o.storageSize);
    const retention = o.retention ?? "30d";
    if (!/^\d+[hdwy]$/.test(retention))
      throw new OptionError("metrics.retention", `"${retention}" is not a period such as 30d`);
    const image = o.image ?? { image: METRICS_SERVER_IMAGE };
    check.image("metrics.image.image", image.image);
    const labels = labelsOf("berth-metrics");
    const name = "berth-metrics";
    this.url = `http://${name}.${ns}.svc:${METRICS_SERVER_PORT}`;

    const account = new ServiceAccountWithRules(this, "account", {
      name,
      namespace: ns,
      labels,
      // Service discovery of the control plane's own pods, in its namespace only.
      rules: {
        clusterRules: [],
        namespaceRules: [
          { namespace: ns, rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] }] },
        ],
      },
    });
    new ApiObject(this, "scrape", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: `${name}-scrape`, namespace: ns, labels },
      data: { "scrape.yml": scrapeConfig(ns, o.scrape) },
    });
    new ApiObject(this, "statefulset", {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name, namespace: ns, labels },
      spec: storedStatefulSetSpec(
        name,
        labels,
        podSpec({
          serviceAccountName: account.name,
          kubeApi: true,
          image,
          containers: [
            container({
              name: "victoria-metrics",
              image,
              command: [
                "/victoria-metrics-prod",
                "-storageDataPath=/storage",
                `-retentionPeriod=${retention}`,
                `-httpListenAddr=:${METRICS_SERVER_PORT}`,
                "-promscrape.config=/config/scrape.yml",
                // Forwards arrive in whole rounds: a few seconds is enough for a round to land.
                "-search.latencyOffset=5s",
              ],
              env: [],
              ports: [{ name: "http", containerPort: METRICS_SERVER_PORT }],
              resources: o.resources ?? METRICS_SERVER_RESOURCES,
              health: { path: "/health", port: "http" },
              volumeMounts: [
                { name: "storage", mountPath: "/storage" },
                { name: "scrape", mountPath: "/config", readOnly: true },
              ],
            }),
          ],
          volumes: [{ name: "scrape", configMap: { name: `${name}-scrape` } }],
        }),
        { size: o.storageSize, storageClass: o.storageClass },
      ),
    });
    service(this, "service", { name, namespace: ns, labels, port: { name: "http", port: METRICS_SERVER_PORT } });
    // The API alone: panels' queries and the operators' forwarded series go through it.
    ingressPolicy(this, "policy", {
      name,
      namespace: ns,
      labels,
      ingress: [{ port: METRICS_SERVER_PORT, from: [podsLabelled(o.apiLabels)] }],
    });
  }
}
