// Running a panel or a raw query: the caller's range is snapped to a step the server chooses so no series
// has more than MAX_POINTS points, the caller's label scope is applied by the metrics server
// (labelScope.ts), answers are cached briefly per (query, scope, range), and series come back aligned on
// one time axis, ready to plot (timestamps plus one column of values per series, null for gaps).
import { createHash } from "node:crypto";
import type { Db } from "../../db/knex.ts";
import { clusterNames } from "../../db/operations/clusters/clusterNames.ts";
import { Forbidden, Invalid, NotFound, Unavailable } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { canSeeSession } from "../sessions/visibility.ts";
import { labelFiltersOf, mayRunRawQuery } from "./labelScope.ts";
import type { MatrixSeries, MetricsServerClient } from "./metricsServer.ts";
import { PANELS_BY_ID, type Panel, SCOPE_NEEDS, type ScopeSelection, selectorOf } from "./panels.ts";
import { podsIn, SessionPods, stampSamples } from "./relay.ts";

/** One source an operator forwards: a GPU exporter of a node, the operator's own metrics, a gateway replica's. */
export interface ForwardedSource {
  job: string;
  instance?: string | undefined;
  text: string;
}

/** Points per series a panel may ask for (a 30-day range is then drawn at a one-hour step). */
export const MAX_POINTS = 1000;
/** The longest range a panel may cover. */
export const MAX_RANGE_SECONDS = 90 * 86_400;
/** The most series one answer carries (the rest are counted in `truncated_series`). */
export const MAX_SERIES = 100;
const STEPS = [15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400];

export interface TimeRange {
  /** Unix seconds. */
  from: number;
  to: number;
}

export interface PlotSeries {
  label: string;
  labels: Record<string, string>;
  values: (number | null)[];
}

export interface PlotAnswer {
  range: { from: number; to: number; step_seconds: number; max_points: number };
  timestamps: number[];
  series: PlotSeries[];
  truncated_series: number;
}

/** The smallest step of the ladder that keeps a range under MAX_POINTS; never below `minStep`. */
export function stepFor(rangeSeconds: number, minStep = 15): number {
  const need = Math.max(minStep, Math.ceil(rangeSeconds / (MAX_POINTS - 2)));
  return STEPS.find((s) => s >= need) ?? Math.ceil(need / 86_400) * 86_400;
}

export function checkRange(r: TimeRange): void {
  if (!(r.to > r.from))
    throw new Invalid("the range is empty or in the wrong order", [
      { path: ["query", "from"], message: "`from` must be before `to`", code: "range_order" },
    ]);
  if (r.to - r.from > MAX_RANGE_SECONDS)
    throw new Invalid("the range is too long", [
      {
        path: ["query", "from"],
        message: `a panel covers at most ${MAX_RANGE_SECONDS / 86_400} days`,
        code: "range_too_long",
      },
    ]);
}

interface CacheEntry {
  at: number;
  answer: Omit<PlotAnswer, "range"> & { range: PlotAnswer["range"] };
}

export class MonitoringService {
  readonly #server: MetricsServerClient;
  readonly #db: Db;
  readonly #now: () => number;
  readonly #ttlMs: number;
  readonly #cache = new Map<string, CacheEntry>();
  readonly #pods: SessionPods;

  constructor(opts: { server: MetricsServerClient; db: Db; now?: () => number; cacheTtlMs?: number }) {
    this.#server = opts.server;
    this.#db = opts.db;
    this.#now = opts.now ?? Date.now;
    this.#ttlMs = opts.cacheTtlMs ?? 10_000;
    this.#pods = new SessionPods({ db: opts.db });
  }

  /** Stamps a cluster's forwarded samples (relay.ts) and stores them, the cluster id set by the import. */
  async forward(clusterId: string, sources: readonly ForwardedSource[]): Promise<{ samples: number }> {
    // Every operator forwards its processes' round whether or not a server is configured: no lookup then.
    if (!this.#server.configured)
      throw new Unavailable("no metrics server is configured (BERTH_METRICS_SERVER_URL)", {
        metrics_server: "not_configured",
      });
    const sessions = await this.#pods.of(
      clusterId,
      sources.flatMap((s) => podsIn(s.text)),
    );
    let samples = 0;
    const parts: string[] = [];
    for (const s of sources) {
      const stamped = stampSamples(s.text, s.job, sessions, s.instance);
      samples += stamped.lines;
      parts.push(stamped.text);
    }
    if (samples > 0) await this.#server.importText(parts.join(""), { berth_cluster: clusterId });
    return { samples };
  }

  get server(): MetricsServerClient {
    return this.#server;
  }

  /** A catalogued panel at a scope the caller names; a session they may not see is 404. */
  async panel(
    principal: Principal,
    id: string,
    scope: ScopeSelection,
    range: TimeRange,
  ): Promise<PlotAnswer & { panel: Panel }> {
    const panel = PANELS_BY_ID.get(id);
    if (!panel) throw new NotFound("panel", id, { panels: [...PANELS_BY_ID.keys()] });
    const missing = SCOPE_NEEDS[panel.scope].filter((k) => !scope[k]);
    if (missing.length > 0)
      throw new Invalid(
        `panel ${id} is of scope ${panel.scope} and needs ${missing.join(", ")}`,
        missing.map((k) => ({ path: ["query", k], message: `required by a ${panel.scope} panel`, code: "required" })),
      );
    checkRange(range);
    if (panel.scope === "session") await this.#assertSessionVisible(principal, scope.session as string);
    const answer = await this.#run(
      panel.build(selectorOf(panel.scope, scope), stepFor(range.to - range.from)),
      labelFiltersOf(principal),
      range,
      panel.legend,
    );
    return { panel, ...answer };
  }

  /** A raw PromQL query (admins), narrowed by the same label scope as panels. */
  async raw(principal: Principal, query: string, range: TimeRange): Promise<PlotAnswer> {
    if (!mayRunRawQuery(principal))
      throw new Forbidden(
        "raw queries are for administrators; use the catalogued panels (GET /api/v1/monitoring/panels)",
      );
    checkRange(range);
    return this.#run(query, labelFiltersOf(principal), range, undefined);
  }

  async #assertSessionVisible(principal: Principal, sessionId: string): Promise<void> {
    const row = await this.#db("sessions")
      .select("owner_id", "organization_id", "project_id")
      .where({ id: sessionId })
      .first();
    if (!row || !canSeeSession(principal, row)) throw new NotFound("session", sessionId);
  }

  async #run(
    query: string,
    filters: string[] | null,
    range: TimeRange,
    legend: string | undefined,
  ): Promise<PlotAnswer> {
    const step = stepFor(range.to - range.from);
    // The grid ends at `to` itself: the metrics server answers no point after "now", so a grid snapped to
    // step multiples would hide what was written in the last step. Equal asks in one second share a cache entry.
    const end = Math.floor(range.to);
    const start = end - Math.ceil((range.to - range.from) / step) * step;
    const rangeOut = { from: start, to: end, step_seconds: step, max_points: MAX_POINTS };
    const timestamps: number[] = [];
    for (let t = start; t <= end; t += step) timestamps.push(t);
    // Nothing visible: no call at all (an empty filter list would otherwise mean "no narrowing").
    if (filters !== null && filters.length === 0)
      return { range: rangeOut, timestamps, series: [], truncated_series: 0 };
    const key = createHash("sha256")
      .update(JSON.stringify([query, filters, start, end, step, legend]))
      .digest("base64url");
    const now = this.#now();
    const hit = this.#cache.get(key);
    if (hit && now - hit.at < this.#ttlMs) return hit.answer;
    const result = await this.#server.queryRange({ query, start, end, stepSeconds: step, filters });
    const answer = align(await withClusterNames(this.#db, result), timestamps, legend);
    const full = { range: rangeOut, timestamps, ...answer };
    if (this.#cache.size > 500) for (const [k, v] of this.#cache) if (now - v.at >= this.#ttlMs) this.#cache.delete(k);
    if (this.#cache.size > 1000) this.#cache.clear();
    this.#cache.set(key, { at: now, answer: full });
    return full;
  }
}

/**
 * Series carry the cluster's id (the label the forward stamps, which a rename cannot break); people know a
 * cluster by its name. The name joins the labels as `berth_cluster_name`, and a legend by cluster shows it.
 */
async function withClusterNames(db: Db, result: MatrixSeries[]): Promise<MatrixSeries[]> {
  const ids = [...new Set(result.flatMap((s) => (s.metric.berth_cluster ? [s.metric.berth_cluster] : [])))];
  const names = await clusterNames(db, ids);
  if (names.size === 0) return result;
  return result.map((s) => {
    const name = s.metric.berth_cluster ? names.get(s.metric.berth_cluster) : undefined;
    return name ? { ...s, metric: { ...s.metric, berth_cluster_name: name } } : s;
  });
}

function align(result: MatrixSeries[], timestamps: number[], legend: string | undefined) {
  const index = new Map(timestamps.map((t, i) => [t, i]));
  const sorted = [...result].sort((a, b) => labelOf(a.metric, legend).localeCompare(labelOf(b.metric, legend)));
  const series: PlotSeries[] = sorted.slice(0, MAX_SERIES).map((s) => {
    const values: (number | null)[] = timestamps.map(() => null);
    for (const [t, v] of s.values) {
      const i = index.get(Math.round(t));
      const n = Number(v);
      if (i !== undefined && Number.isFinite(n)) values[i] = n;
    }
    return { label: labelOf(s.metric, legend), labels: s.metric, values };
  });
  return { series, truncated_series: Math.max(0, result.length - MAX_SERIES) };
}

function labelOf(metric: Record<string, string>, legend: string | undefined): string {
  if (legend === "berth_cluster" && metric.berth_cluster_name) return metric.berth_cluster_name;
  if (legend && metric[legend]) return metric[legend];
  const entries = Object.entries(metric);
  return entries.length === 0 ? "value" : entries.map(([k, v]) => `${k}=${v}`).join(", ");
}
