// Formatting shared by the pages. Credits travel as strings of integer minor units (the API's rule):
// never parsed to a float.

/** Minor units per credit (the API: 1 credit = 1,000,000 minor units). */
export const CREDIT_SCALE = 1_000_000n;
const SCALE_DIGITS = 6;

/** "1500750000" -> "1,500.75": at least two decimals, more only when they are not zero (BigInt: no float touches money). */
export function formatCredits(minor: string | number | bigint | null | undefined): string {
  if (minor === null || minor === undefined || minor === "") return "—";
  let v: bigint;
  try {
    v = BigInt(minor);
  } catch {
    return String(minor);
  }
  const neg = v < 0n;
  if (neg) v = -v;
  const whole = (v / CREDIT_SCALE).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const frac = (v % CREDIT_SCALE).toString().padStart(SCALE_DIGITS, "0").replace(/0+$/, "").padEnd(2, "0");
  return `${neg ? "−" : ""}${whole}.${frac}`;
}

/** A duration in seconds as "1 h 05 min", "4 min 10 s", "12 s". */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return "—";
  const s = Math.floor(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  if (h > 0) return `${h} h ${String(m).padStart(2, "0")} min`;
  if (m > 0) return `${m} min ${String(r).padStart(2, "0")} s`;
  return `${r} s`;
}

/** "3 min ago", "in 2 h", relative to now. */
export function formatRelative(iso: string | null | undefined, now: number = Date.now()): string {
  if (!iso) return "—";
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return "—";
  const d = Math.round((t - now) / 1000);
  const abs = Math.abs(d);
  const unit =
    abs < 60
      ? `${abs} s`
      : abs < 3600
        ? `${Math.round(abs / 60)} min`
        : abs < 86400
          ? `${Math.round(abs / 3600)} h`
          : `${Math.round(abs / 86400)} d`;
  if (abs < 5) return "just now";
  return d < 0 ? `${unit} ago` : `in ${unit}`;
}

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "—";
  return d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
}

export function formatPercent(v: number | null | undefined): string {
  return v === null || v === undefined || !Number.isFinite(v) ? "—" : `${Math.round(v)} %`;
}

export function formatBytes(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return "—";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let x = v;
  let i = 0;
  while (x >= 1024 && i < units.length - 1) {
    x /= 1024;
    i++;
  }
  return `${x >= 10 || i === 0 ? Math.round(x) : x.toFixed(1)} ${units[i]}`;
}

/** A controller's message ("waiting for 1 × H100", Kubernetes' lower-case style) as a sentence on a page. */
export function asSentence(message: string): string {
  const t = message.trim();
  if (!t) return t;
  const s = t[0]?.toUpperCase() + t.slice(1);
  return /[.!?]$/.test(s) ? s : `${s}.`;
}
