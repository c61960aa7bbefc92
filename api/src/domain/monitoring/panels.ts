// The catalogue of panels (docs/dev/monitoring.md). The browser names a panel, a scope and a range; the
// query is built here from the panel's template and the scope's selector, never sent by the browser.
// GPU series are the DCGM exporter's (`UUID`, `Hostname`, per-card) and, on clusters with HAMi, its
// per-container families (`deviceuuid`); sessions' shares prefer HAMi's figures when a card is shared.

export const SCOPES = ["fleet", "cluster", "node", "card", "session"] as const;
export type PanelScope = (typeof SCOPES)[number];

export interface ScopeSelection {
  cluster?: string | undefined;
  node?: string | undefined;
  card?: string | undefined;
  session?: string | undefined;
}

export interface Panel {
  id: string;
  title: string;
  scope: PanelScope;
  unit: "percent" | "MiB" | "W" | "C" | "count" | "ms" | "per_s";
  description: string;
  /** The label that names each series in the answer. */
  legend: string;
  /** The query; `stepSeconds` is the answer's step (a rate's window follows it). */
  build(selector: string, stepSeconds: number): string;
}

const sel = (extra: string, s: string): string => `{${[s, extra].filter(Boolean).join(",")}}`;
const perCard =
  (metric: string, legend = "card") =>
  (s: string) =>
    `max by (${legend}) (label_replace(${metric}${sel("", s)}, "card", "$1", "UUID", "(.*)"))`;
const sessionShare = (hami: string, dcgm: string) => (s: string) =>
  `max by (card) (label_replace(${hami}${sel("", s)}, "card", "$1", "deviceuuid", "(.*)")) or max by (card) (label_replace(${dcgm}${sel("", s)}, "card", "$1", "UUID", "(.*)"))`;

/**
 * A rate's window for a step: a step and one more 15 s scrape, at least four scrapes (Grafana's
 * $__rate_interval), so every point sees at least two samples and no sample falls between points.
 */
export const rateWindow = (stepSeconds: number): string => `${Math.max(stepSeconds + 15, 60)}s`;

const GW = "berth_gateway_upstream_duration_seconds";
const gwSel = (s: string, extra = "") => sel([`job="gateway"`, extra].filter(Boolean).join(","), s);
/** A quantile of the gateway's upstream times over every replica and worker, in ms, named `quantile`. */
const gatewayQuantile = (q: number, name: string) => (s: string, step: number) =>
  `label_replace(histogram_quantile(${q}, sum by (le) (rate(${GW}_bucket${gwSel(s, 'outcome!="failed"')}[${rateWindow(step)}]))) * 1000, "quantile", "${name}", "", "")`;

export const PANELS: readonly Panel[] = [
  {
    id: "fleet.gpu_utilization",
    title: "GPU utilisation by cluster",
    scope: "fleet",
    unit: "percent",
    description: "Mean utilisation of the GPUs each cluster reports.",
    legend: "berth_cluster",
    build: (s) => `avg by (berth_cluster) (DCGM_FI_DEV_GPU_UTIL${sel("", s)})`,
  },
  {
    id: "fleet.gpu_memory_used",
    title: "GPU memory used by cluster",
    scope: "fleet",
    unit: "MiB",
    description: "Framebuffer memory in use, summed over each cluster's GPUs.",
    legend: "berth_cluster",
    build: (s) => `sum by (berth_cluster) (DCGM_FI_DEV_FB_USED${sel("", s)})`,
  },
  {
    id: "cluster.gpu_utilization",
    title: "GPU utilisation by node",
    scope: "cluster",
    unit: "percent",
    description: "Mean utilisation of each node's GPUs.",
    legend: "Hostname",
    build: (s) => `avg by (Hostname) (DCGM_FI_DEV_GPU_UTIL${sel("", s)})`,
  },
  {
    id: "cluster.gpu_power",
    title: "GPU power by node",
    scope: "cluster",
    unit: "W",
    description: "Power drawn by each node's GPUs.",
    legend: "Hostname",
    build: (s) => `sum by (Hostname) (DCGM_FI_DEV_POWER_USAGE${sel("", s)})`,
  },
  {
    id: "cluster.gateway_latency",
    title: "Gateway latency to sessions",
    scope: "cluster",
    unit: "ms",
    description:
      "Time from the session gateway forwarding a request to a session's answer starting, p50 and p99 over every replica (requests that got no answer are errors, not latency).",
    legend: "quantile",
    build: (s, step) => `${gatewayQuantile(0.5, "p50")(s, step)} or ${gatewayQuantile(0.99, "p99")(s, step)}`,
  },
  {
    id: "cluster.gateway_errors",
    title: "Gateway errors to sessions",
    scope: "cluster",
    unit: "percent",
    description: "Share of requests to sessions that got no answer or a 5xx from the session, over every replica.",
    legend: "what",
    build: (s, step) => {
      const w = rateWindow(step);
      const all = `sum(rate(${GW}_count${gwSel(s)}[${w}]))`;
      // 0 (not a gap) while requests flow and none fails.
      const bad = `(sum(rate(${GW}_count${gwSel(s, 'outcome=~"5xx|failed"')}[${w}])) or ${all} * 0)`;
      return `label_replace(100 * ${bad} / ${all}, "what", "errors", "", "")`;
    },
  },
  {
    id: "cluster.gateway_requests",
    title: "Gateway requests by replica",
    scope: "cluster",
    unit: "per_s",
    description: "Requests and WebSocket upgrades each session gateway replica answered, per second.",
    legend: "instance",
    build: (s, step) => `sum by (instance) (rate(berth_gateway_requests_total${gwSel(s)}[${rateWindow(step)}]))`,
  },
  {
    id: "node.gpu_utilization",
    title: "Utilisation per card",
    scope: "node",
    unit: "percent",
    description: "Each card's utilisation on this node.",
    legend: "card",
    build: perCard("DCGM_FI_DEV_GPU_UTIL"),
  },
  {
    id: "node.gpu_memory_used",
    title: "Memory used per card",
    scope: "node",
    unit: "MiB",
    description: "Each card's framebuffer memory in use.",
    legend: "card",
    build: perCard("DCGM_FI_DEV_FB_USED"),
  },
  {
    id: "node.gpu_temperature",
    title: "Temperature per card",
    scope: "node",
    unit: "C",
    description: "Each card's temperature.",
    legend: "card",
    build: perCard("DCGM_FI_DEV_GPU_TEMP"),
  },
  {
    id: "card.gpu_utilization",
    title: "Utilisation",
    scope: "card",
    unit: "percent",
    description: "The card's utilisation.",
    legend: "card",
    build: perCard("DCGM_FI_DEV_GPU_UTIL"),
  },
  {
    id: "card.gpu_memory",
    title: "Memory used and free",
    scope: "card",
    unit: "MiB",
    description: "The card's framebuffer memory, used and free.",
    legend: "memory",
    build: (s) =>
      `label_replace(max(DCGM_FI_DEV_FB_USED${sel("", s)}), "memory", "used", "", "") or label_replace(max(DCGM_FI_DEV_FB_FREE${sel("", s)}), "memory", "free", "", "")`,
  },
  {
    id: "card.gpu_power",
    title: "Power",
    scope: "card",
    unit: "W",
    description: "The card's power draw.",
    legend: "card",
    build: perCard("DCGM_FI_DEV_POWER_USAGE"),
  },
  {
    id: "card.gpu_temperature",
    title: "Temperature",
    scope: "card",
    unit: "C",
    description: "The card's temperature.",
    legend: "card",
    build: perCard("DCGM_FI_DEV_GPU_TEMP"),
  },
  {
    id: "card.xid_errors",
    title: "XID errors",
    scope: "card",
    unit: "count",
    description: "The last XID error the card reported (0: none).",
    legend: "card",
    build: perCard("DCGM_FI_DEV_XID_ERRORS"),
  },
  {
    id: "session.gpu_utilization",
    title: "GPU utilisation",
    scope: "session",
    unit: "percent",
    description: "Utilisation of each card the session holds (its own share on a shared card).",
    legend: "card",
    build: sessionShare("Device_utilization_desc_of_container", "DCGM_FI_DEV_GPU_UTIL"),
  },
  {
    id: "session.gpu_memory_used",
    title: "GPU memory used",
    scope: "session",
    unit: "MiB",
    description: "Memory the session uses on each card it holds.",
    legend: "card",
    build: (s) =>
      `max by (card) (label_replace(vGPU_device_memory_usage_in_bytes${sel("", s)} / 1048576, "card", "$1", "deviceuuid", "(.*)")) or max by (card) (label_replace(DCGM_FI_DEV_FB_USED${sel("", s)}, "card", "$1", "UUID", "(.*)"))`,
  },
];

export const PANELS_BY_ID: ReadonlyMap<string, Panel> = new Map(PANELS.map((p) => [p.id, p]));

/** What each scope must name: a cluster for node and card as well; a session alone. */
export const SCOPE_NEEDS: Record<PanelScope, (keyof ScopeSelection)[]> = {
  fleet: [],
  cluster: ["cluster"],
  node: ["cluster", "node"],
  card: ["cluster", "card"],
  session: ["session"],
};

/** The selector of a scope; values are quoted, so nothing the caller sends becomes query syntax. */
export function selectorOf(scope: PanelScope, s: ScopeSelection): string {
  const q = (v: string | undefined) => JSON.stringify(v ?? "");
  switch (scope) {
    case "fleet":
      return s.cluster ? `berth_cluster=${q(s.cluster)}` : "";
    case "cluster":
      return `berth_cluster=${q(s.cluster)}`;
    case "node":
      return `berth_cluster=${q(s.cluster)},Hostname=${q(s.node)}`;
    case "card":
      return `berth_cluster=${q(s.cluster)},UUID=${q(s.card)}`;
    case "session":
      return `berth_session=${q(s.session)}`;
  }
}
