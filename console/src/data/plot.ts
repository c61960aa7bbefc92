// Plain functions over the monitoring API's answers (GET /api/v1/monitoring/panels/{id}): uPlot's
// column data, units for axes and the text alternative each chart carries.
export interface PlotAnswer {
  timestamps: number[];
  series: { label: string; values: (number | null)[] }[];
}

export type Unit = "percent" | "MiB" | "W" | "C" | "count" | "ms" | "per_s";

export function formatValue(v: number | null | undefined, unit: Unit): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return "no data";
  switch (unit) {
    case "percent":
      return `${Math.round(v)} %`;
    case "MiB":
      return v >= 1024 ? `${(v / 1024).toFixed(1)} GiB` : `${Math.round(v)} MiB`;
    case "W":
      return `${Math.round(v)} W`;
    case "C":
      return `${Math.round(v)} °C`;
    case "ms":
      return v < 10 ? `${v.toFixed(1)} ms` : `${Math.round(v)} ms`;
    case "per_s":
      return v < 10 ? `${v.toFixed(2)}/s` : `${Math.round(v)}/s`;
    default:
      return String(Math.round(v * 100) / 100);
  }
}

/** uPlot's aligned data: the time axis, then one column per series. */
export function toColumns(a: PlotAnswer): [number[], ...(number | null)[][]] {
  return [a.timestamps, ...a.series.map((s) => s.values)];
}

export interface SeriesSummary {
  label: string;
  latest: number | null;
  min: number | null;
  max: number | null;
  mean: number | null;
}

/** Per series: the latest value, and min, mean and max over the range (nulls skipped). */
export function summarize(a: PlotAnswer): SeriesSummary[] {
  return a.series.map((s) => {
    const vs = s.values.filter((v): v is number => v !== null && Number.isFinite(v));
    const latest = [...s.values].reverse().find((v): v is number => v !== null) ?? null;
    return {
      label: s.label,
      latest,
      min: vs.length ? Math.min(...vs) : null,
      max: vs.length ? Math.max(...vs) : null,
      mean: vs.length ? vs.reduce((x, y) => x + y, 0) / vs.length : null,
    };
  });
}

/** One sentence a screen reader reads for the chart. */
export function describe(title: string, a: PlotAnswer, unit: Unit): string {
  if (a.series.length === 0) return `${title}: no data in this range.`;
  const parts = summarize(a).map(
    (s) =>
      `${s.label}: now ${formatValue(s.latest, unit)}, between ${formatValue(s.min, unit)} and ${formatValue(s.max, unit)}`,
  );
  return `${title}. ${parts.join("; ")}.`;
}

/** Index of the sample nearest to `i` moving by `step` that has any value (keyboard cursor). */
export function nextIndex(a: PlotAnswer, i: number, step: number): number {
  const n = a.timestamps.length;
  let j = Math.min(n - 1, Math.max(0, i + step));
  while (j > 0 && j < n - 1 && a.series.every((s) => s.values[j] === null)) j += Math.sign(step) || 1;
  return j;
}
