// The control plane's one metrics server (docs/dev/monitoring.md, docs/adr/0010-metrics-server.md), as
// the API reaches it: the Prometheus query API for panels, and VictoriaMetrics' text import for what the
// operators forward. Every failure to reach it becomes `unavailable` (503), never a 500: monitoring is a
// view, and the rest of Berth keeps working without it.
import { Invalid, Unavailable } from "../../errors.ts";

export interface RangeQuery {
  query: string;
  /** Unix seconds. */
  start: number;
  end: number;
  stepSeconds: number;
  /**
   * Series selectors every selector of the query is narrowed by (any one of them must match), e.g.
   * `{berth_owner="usr_1"}`; null: no narrowing (super_admin). An empty list matches nothing.
   */
  filters: readonly string[] | null;
}

export interface MatrixSeries {
  metric: Record<string, string>;
  values: [number, string][];
}

export interface MetricsServerClient {
  readonly configured: boolean;
  queryRange(q: RangeQuery): Promise<MatrixSeries[]>;
  /** Prometheus text; `extraLabels` are set on every sample and win over the text's own. */
  importText(text: string, extraLabels: Record<string, string>): Promise<void>;
}

export interface MetricsServerOptions {
  url?: string | undefined;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export function createMetricsServerClient(opts: MetricsServerOptions): MetricsServerClient {
  const base = opts.url?.replace(/\/+$/, "");
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const doFetch = opts.fetch ?? fetch;

  const call = async (path: string, init: RequestInit): Promise<Response> => {
    if (!base)
      throw new Unavailable("no metrics server is configured (BERTH_METRICS_SERVER_URL)", {
        metrics_server: "not_configured",
      });
    try {
      return await doFetch(`${base}${path}`, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    } catch (err) {
      const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
      throw new Unavailable("the metrics server is not reachable; try again shortly", {
        metrics_server: timedOut ? "timeout" : "down",
      });
    }
  };

  return {
    configured: base !== undefined,
    async queryRange(q) {
      const form = new URLSearchParams({
        query: q.query,
        start: String(q.start),
        end: String(q.end),
        step: `${q.stepSeconds}s`,
      });
      for (const f of q.filters ?? []) form.append("extra_filters[]", f);
      const res = await call("/api/v1/query_range", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: form,
      });
      const body = (await res.json().catch(() => undefined)) as
        | { status?: string; error?: string; data?: { result?: MatrixSeries[] } }
        | undefined;
      if (res.status === 400 || res.status === 422)
        throw new Invalid("the metrics server refused the query", [
          { path: ["body", "query"], message: body?.error ?? `status ${res.status}`, code: "query_refused" },
        ]);
      if (!res.ok || body?.status !== "success")
        throw new Unavailable("the metrics server could not answer; try again shortly", {
          metrics_server: `status_${res.status}`,
        });
      return body.data?.result ?? [];
    },
    async importText(text, extraLabels) {
      const qs = new URLSearchParams();
      for (const [k, v] of Object.entries(extraLabels)) qs.append("extra_label", `${k}=${v}`);
      const res = await call(`/api/v1/import/prometheus?${qs}`, {
        method: "POST",
        headers: { "content-type": "text/plain" },
        body: text,
      });
      if (!res.ok) {
        await res.body?.cancel();
        throw new Unavailable("the metrics server did not take the samples", {
          metrics_server: `status_${res.status}`,
        });
      }
      await res.body?.cancel();
    },
  };
}
