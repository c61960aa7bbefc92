// What the audit log keeps of a change: the values, with secrets replaced. A key naming a secret
// (password, token, secret, key material, credential, kubeconfig) keeps its key and loses its value, so a
// reader sees that it changed, never what to.
const SECRET_KEY = /pass(word)?|secret|token|credential|kubeconfig|private|api[_-]?key|authorization|cookie/i;
const MAX_STRING = 1024;
const MAX_DEPTH = 6;
const MAX_KEYS = 100;

export const REDACTED = "[redacted]";

export function redact(value: unknown, depth = 0): unknown {
  if (value === null || value === undefined) return value ?? null;
  if (typeof value === "string") return value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}…` : value;
  if (typeof value === "number" || typeof value === "boolean") return value;
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Date) return value.toISOString();
  if (depth >= MAX_DEPTH) return "[nested too deep]";
  if (Array.isArray(value)) return value.slice(0, MAX_KEYS).map((v) => redact(v, depth + 1));
  if (typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>).slice(0, MAX_KEYS)) {
      out[k] = SECRET_KEY.test(k) ? REDACTED : redact(v, depth + 1);
    }
    return out;
  }
  return String(value);
}

/** The diff an audit row carries: before and after, each redacted; absent sides are left out. */
export function auditDiff(before: unknown, after: unknown): Record<string, unknown> | null {
  if (before === undefined && after === undefined) return null;
  return {
    ...(before !== undefined ? { before: redact(before) } : {}),
    ...(after !== undefined ? { after: redact(after) } : {}),
  };
}

/** success below 400; 401 and 403 are denied attempts; everything else failed. */
export function outcomeOf(status: number): "success" | "denied" | "failed" {
  if (status < 400) return "success";
  return status === 401 || status === 403 ? "denied" : "failed";
}
