// SVG path data for a sparkline: gaps (null) break the line; the y axis starts at zero.
export interface Sparkline {
  line: string;
  area: string;
  min: number;
  max: number;
  last: number | undefined;
}

export function sparkline(
  values: readonly (number | null)[],
  width: number,
  height: number,
  fixedMax?: number,
): Sparkline {
  const nums = values.filter((v): v is number => typeof v === "number" && Number.isFinite(v));
  if (nums.length === 0) return { line: "", area: "", min: 0, max: 0, last: undefined };
  const min = Math.min(...nums);
  const max = Math.max(...nums);
  const top = fixedMax ?? (max > 0 ? max : 1);
  const step = values.length > 1 ? width / (values.length - 1) : 0;
  const y = (v: number) => (height - (Math.min(v, top) / top) * (height - 2) - 1).toFixed(1);
  let line = "";
  let area = "";
  let run: string[] = [];
  const flush = () => {
    if (run.length === 0) return;
    line += `M${run.join("L")}`;
    const first = run[0]?.split(",")[0];
    const last = run.at(-1)?.split(",")[0];
    area += `M${first},${height}L${run.join("L")}L${last},${height}Z`;
    run = [];
  };
  values.forEach((v, i) => {
    if (typeof v === "number" && Number.isFinite(v)) run.push(`${(i * step).toFixed(1)},${y(v)}`);
    else flush();
  });
  flush();
  return { line, area, min, max, last: nums.at(-1) };
}
