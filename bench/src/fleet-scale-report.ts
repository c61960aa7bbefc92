// The pure parts of bench/src/fleet-scale.ts: which steps of fleet size to run at a given scale, the table
// printed per measure and the chart drawn per measure (an SVG; pngFromSvg renders it with the machine's
// Chromium). Kept apart so that fleet-scale-report.test.ts can hold them without a bed.
import { writeFileSync } from "node:fs";

/** The full-size steps (#37): nodes per GPU cluster, running sessions, users. */
export const FULL_STEPS = [
  { nodesPerCluster: 100, sessions: 1_000, users: 1_000 },
  { nodesPerCluster: 500, sessions: 5_000, users: 4_000 },
  { nodesPerCluster: 2_000, sessions: 20_000, users: 10_000 },
] as const;

export interface Step {
  /** 1-based, for the tables' rows. */
  index: number;
  nodesPerCluster: number;
  clusters: number;
  gpusPerNode: number;
  sessions: number;
  users: number;
  organizations: number;
}

/**
 * The steps at `scale` (1: the sizes; 0.2: 20 → 100 → 400 nodes, 200 → 1,000 → 4,000 sessions).
 * Every figure is rounded up, so a tiny scale still has a node per cluster and a user per organization;
 * sessions never exceed the GPUs (one each), and a step never shrinks below the one before it.
 */
export function planSteps(
  scale: number,
  opts: { clusters?: number; gpusPerNode?: number; organizations?: number; steps?: number } = {},
): Step[] {
  if (!(scale > 0) || scale > 1) throw new RangeError(`scale must be in (0, 1], not ${scale}`);
  const clusters = opts.clusters ?? 3;
  const gpusPerNode = opts.gpusPerNode ?? 8;
  const organizations = opts.organizations ?? 100;
  const take = FULL_STEPS.slice(0, opts.steps ?? FULL_STEPS.length);
  const out: Step[] = [];
  for (const [i, s] of take.entries()) {
    const nodesPerCluster = Math.max(1, Math.ceil(s.nodesPerCluster * scale), out.at(-1)?.nodesPerCluster ?? 0);
    const gpus = nodesPerCluster * clusters * gpusPerNode;
    const sessions = Math.min(gpus, Math.max(1, Math.ceil(s.sessions * scale), out.at(-1)?.sessions ?? 0));
    const users = Math.max(organizations, Math.ceil(s.users * scale), out.at(-1)?.users ?? 0);
    out.push({ index: i + 1, nodesPerCluster, clusters, gpusPerNode, sessions, users, organizations });
  }
  return out;
}

/** One measure across the steps: a series per process or per percentile, a value per step (NaN: not taken). */
export interface Measure {
  /** File-safe key, e.g. "rss". */
  key: string;
  title: string;
  unit: string;
  /** What the x axis counts, e.g. "running sessions". */
  x: string;
  xs: number[];
  series: { name: string; values: number[] }[];
}

const fmt = (v: number) =>
  Number.isNaN(v)
    ? "n/a"
    : Math.abs(v) >= 100
      ? Math.round(v).toLocaleString("en-US")
      : Math.abs(v) >= 10
        ? v.toFixed(1)
        : v.toFixed(2);

/** A plain-text table: a row per step, a column per series. */
export function table(m: Measure): string {
  const head = [m.x, ...m.series.map((s) => s.name)];
  const rows = m.xs.map((x, i) => [fmt(x), ...m.series.map((s) => fmt(s.values[i] ?? Number.NaN))]);
  const widths = head.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] as string).length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padStart(widths[i] as number)).join(" | ")} |`;
  return [
    `${m.title} (${m.unit})`,
    line(head),
    `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`,
    ...rows.map(line),
  ].join("\n");
}

/**
 * How much a per-unit cost grew from the first step to the last (last / first − 1), for the "flat
 * within 25 %"; NaN when either end is missing or the first is zero.
 */
export function growth(values: readonly number[]): number {
  const first = values.find((v) => !Number.isNaN(v));
  const last = [...values].reverse().find((v) => !Number.isNaN(v));
  if (first === undefined || last === undefined || first === 0) return Number.NaN;
  return last / first - 1;
}

const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** A line chart of one measure, a line per series, the x axis in the steps' own values. */
export function chartSvg(m: Measure, width = 720, height = 420): string {
  const pad = { left: 70, right: 180, top: 40, bottom: 50 };
  const w = width - pad.left - pad.right;
  const h = height - pad.top - pad.bottom;
  const all = m.series.flatMap((s) => s.values).filter((v) => Number.isFinite(v));
  const top = Math.max(1e-9, ...all) * 1.1;
  const xMax = Math.max(...m.xs);
  const xMin = Math.min(0, ...m.xs);
  const px = (x: number) => pad.left + ((x - xMin) / Math.max(1e-9, xMax - xMin)) * w;
  const py = (y: number) => pad.top + h - (y / top) * h;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${pad.left}" y="22" font-size="15" font-weight="bold">${esc(m.title)}</text>`,
    `<line x1="${pad.left}" y1="${pad.top + h}" x2="${pad.left + w}" y2="${pad.top + h}" stroke="black"/>`,
    `<line x1="${pad.left}" y1="${pad.top}" x2="${pad.left}" y2="${pad.top + h}" stroke="black"/>`,
    `<text x="${pad.left + w / 2}" y="${height - 12}" text-anchor="middle">${esc(m.x)}</text>`,
    `<text x="16" y="${pad.top + h / 2}" text-anchor="middle" transform="rotate(-90 16 ${pad.top + h / 2})">${esc(m.unit)}</text>`,
  ];
  for (let i = 0; i <= 4; i++) {
    const v = (top * i) / 4;
    out.push(
      `<line x1="${pad.left}" y1="${py(v)}" x2="${pad.left + w}" y2="${py(v)}" stroke="#ddd"/>`,
      `<text x="${pad.left - 6}" y="${py(v) + 4}" text-anchor="end">${esc(fmt(v))}</text>`,
    );
  }
  for (const x of m.xs)
    out.push(`<text x="${px(x)}" y="${pad.top + h + 18}" text-anchor="middle">${esc(fmt(x))}</text>`);
  for (const [i, s] of m.series.entries()) {
    const colour = COLOURS[i % COLOURS.length];
    const points = m.xs
      .map((x, j) => [x, s.values[j] ?? Number.NaN] as const)
      .filter(([, v]) => Number.isFinite(v))
      .map(([x, v]) => `${px(x).toFixed(1)},${py(v).toFixed(1)}`);
    if (points.length > 1)
      out.push(`<polyline fill="none" stroke="${colour}" stroke-width="2" points="${points.join(" ")}"/>`);
    for (const p of points) {
      const [cx, cy] = p.split(",");
      out.push(`<circle cx="${cx}" cy="${cy}" r="3.5" fill="${colour}"/>`);
    }
    const ly = pad.top + 10 + i * 18;
    out.push(
      `<rect x="${pad.left + w + 14}" y="${ly - 9}" width="12" height="12" fill="${colour}"/>`,
      `<text x="${pad.left + w + 32}" y="${ly + 1}">${esc(s.name)}</text>`,
    );
  }
  out.push("</svg>");
  return out.join("\n");
}

/**
 * Renders SVGs to PNG files with headless Chromium (playwright-core): one browser for all of them. Each
 * entry's SVG is written next to its PNG, so a chart is there even where no browser runs.
 */
export async function writeCharts(
  charts: { file: string; svg: string }[],
  executablePath = process.env.BERTH_CHROMIUM ?? "/usr/bin/chromium",
): Promise<void> {
  for (const c of charts) writeFileSync(c.file.replace(/\.png$/, ".svg"), c.svg);
  const { chromium } = await import("playwright-core");
  const browser = await chromium.launch({ executablePath, args: ["--headless", "--no-sandbox", "--disable-gpu"] });
  try {
    const page = await browser.newPage();
    for (const c of charts) {
      const size = /width="(\d+)" height="(\d+)"/.exec(c.svg);
      await page.setViewportSize({ width: Number(size?.[1] ?? 720), height: Number(size?.[2] ?? 420) });
      await page.setContent(`<html><body style="margin:0">${c.svg}</body></html>`);
      await page.screenshot({ path: c.file });
    }
  } finally {
    await browser.close();
  }
}
