// Prometheus metrics, on a registry of the operator's own (not prom-client's global one), so two
// operators in one process — tests, the local fleet — keep separate figures.
import { Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";

export interface OperatorMetrics {
  registry: Registry;
  /** Reports to the control plane by kind and outcome: an HTTP status, or `network`, `no_token`. */
  reports: Counter<"report" | "status">;
  lastSuccess: Gauge<"report">;
  leader: Gauge;
  watchSynced: Gauge<"resource">;
  relists: Counter<"resource" | "reason">;
  inventoryNodes: Gauge;
  /** Scrapes of the GPU metrics source by outcome: ok, an HTTP status, network, timeout, parse. */
  gpuScrapes: Counter<"result">;
  /** Rounds forwarded to the control plane's metrics server, by result: ok, empty (nothing to send), an HTTP status, network, no_token. */
  forwards: Counter<"result">;
  /** Reads of gateway replicas' status ports: ok, failed, or discovery_failed (the pods could not be listed). */
  gatewayScrapes: Counter<"result">;
}

export function createMetrics(labels: { cluster: string; identity: string }): OperatorMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ cluster: labels.cluster, identity: labels.identity });
  collectDefaultMetrics({ register: registry, prefix: "berth_operator_" });
  const registers = [registry];
  return {
    registry,
    reports: new Counter({
      name: "berth_operator_reports_total",
      help: "Reports sent to the control plane's internal plane, by report and outcome (HTTP status, network, no_token).",
      labelNames: ["report", "status"],
      registers,
    }),
    lastSuccess: new Gauge({
      name: "berth_operator_last_report_success_timestamp_seconds",
      help: "Unix time of the last report the control plane accepted, by report.",
      labelNames: ["report"],
      registers,
    }),
    leader: new Gauge({ name: "berth_operator_leader", help: "1 while this replica holds the lease.", registers }),
    watchSynced: new Gauge({
      name: "berth_operator_watch_synced",
      help: "1 while the watch of a resource is listed and open.",
      labelNames: ["resource"],
      registers,
    }),
    relists: new Counter({
      name: "berth_operator_relists_total",
      help: "Full lists of a watched resource, by reason (initial, expired, status <code>).",
      labelNames: ["resource", "reason"],
      registers,
    }),
    inventoryNodes: new Gauge({
      name: "berth_operator_inventory_nodes",
      help: "GPU nodes in the last computed inventory.",
      registers,
    }),
    forwards: new Counter({
      name: "berth_operator_metrics_forwards_total",
      help: "Rounds (GPU exporters; the operator and gateways) forwarded to the control plane's metrics server (POST /internal/v1/metrics), by result.",
      labelNames: ["result"],
      registers,
    }),
    gatewayScrapes: new Counter({
      name: "berth_operator_gateway_scrapes_total",
      help: "Reads of the session gateway replicas' status ports, by result: ok, failed, discovery_failed.",
      labelNames: ["result"],
      registers,
    }),
    gpuScrapes: new Counter({
      name: "berth_operator_gpu_metrics_scrapes_total",
      help: "Scrapes of the GPU metrics source (DCGM exporter), by result: ok, an HTTP status, network, timeout, parse.",
      labelNames: ["result"],
      registers,
    }),
  };
}
