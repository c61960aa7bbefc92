// Forwarded series, stamped and stored (docs/dev/monitoring.md). An operator scrapes its cluster's GPU
// exporters (and itself) and posts the text to POST /internal/v1/metrics; this file rewrites each sample
// line before the metrics server takes it:
// - every `berth_*` label the text carries is dropped: those are ours to set;
// - a sample naming a pod (dcgm-exporter's `pod`/`namespace`, `exported_pod` behind a Prometheus, HAMi's
//   `podname`/`podnamespace`) that is a session's pod on this cluster gets that session's labels, which
//   is what members' and admins' queries are narrowed by (labelScope.ts);
// - `job` names the source, `instance` the replica when the operator names one (each gateway pod); the
//   cluster id is set by the import itself (extra_label), from the operator's token, so a cluster cannot
//   write another's series.
import type { Db } from "../../db/knex.ts";

export interface SessionLabels {
  id: string;
  owner_id: string;
  organization_id: string;
  project_id: string | null;
}

/** Sessions placed on a cluster, by pod name (the session's resource name), briefly cached. */
export class SessionPods {
  readonly #db: Db;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #byCluster = new Map<string, { at: number; pods: Map<string, SessionLabels> }>();

  constructor(opts: { db: Db; ttlMs?: number; now?: () => number }) {
    this.#db = opts.db;
    this.#ttlMs = opts.ttlMs ?? 5000;
    this.#now = opts.now ?? Date.now;
  }

  async of(clusterId: string, wanted: readonly string[]): Promise<Map<string, SessionLabels>> {
    const hit = this.#byCluster.get(clusterId);
    const now = this.#now();
    // A pod we do not know yet is a session that just started: reload, at most once a second.
    const stale = !hit || now - hit.at > this.#ttlMs || (wanted.some((p) => !hit.pods.has(p)) && now - hit.at > 1000);
    if (!stale) return hit.pods;
    const rows: (SessionLabels & { cr_name: string })[] = await this.#db("sessions")
      .select("id", "cr_name", "owner_id", "organization_id", "project_id")
      .where({ cluster_id: clusterId })
      .whereNotIn("phase", ["Terminated", "Failed"]);
    const pods = new Map(rows.map((r) => [r.cr_name, r]));
    this.#byCluster.set(clusterId, { at: now, pods });
    return pods;
  }
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"/g;
const unquoteLabel = (v: string): string => v.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
const quoteLabel = (v: string): string => v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");

function closingBrace(s: string, from: number): number {
  let quoted = false;
  for (let i = from + 1; i < s.length; i++) {
    const c = s[i];
    if (quoted) {
      if (c === "\\") i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === "}") return i;
  }
  return -1;
}

interface ParsedLine {
  name: string;
  labels: [string, string][];
  rest: string;
}

function parseLine(line: string): ParsedLine | undefined {
  const name = NAME.exec(line)?.[0];
  if (!name) return undefined;
  let i = name.length;
  while (line[i] === " ") i++;
  const labels: [string, string][] = [];
  if (line[i] === "{") {
    const close = closingBrace(line, i);
    if (close < 0) return undefined;
    for (const m of line.slice(i + 1, close).matchAll(LABEL))
      labels.push([m[1] as string, unquoteLabel(m[2] as string)]);
    i = close + 1;
  }
  const rest = line.slice(i).trim();
  if (rest === "") return undefined;
  return { name, labels, rest };
}

/** Pod names the text's samples mention (to load the sessions once per batch). */
export function podsIn(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(/(?:exported_pod|podname|pod)="((?:[^"\\]|\\.)*)"/g)) out.add(m[1] as string);
  return [...out];
}

/** The text rewritten as described above; comments and unparsable lines are left out. */
export function stampSamples(
  text: string,
  job: string,
  sessions: ReadonlyMap<string, SessionLabels>,
  instance?: string,
): { text: string; lines: number } {
  const out: string[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const p = parseLine(line);
    if (!p) continue;
    const l = new Map(p.labels.filter(([k]) => !k.startsWith("berth_") && k !== "job"));
    const pod = l.get("exported_pod") || l.get("pod") || l.get("podname");
    const s = pod ? sessions.get(pod) : undefined;
    l.set("job", job);
    // The replica the operator scraped (a gateway pod): wins over whatever the text says, as a scraper's
    // target labels do.
    if (instance) l.set("instance", instance);
    if (s) {
      l.set("berth_session", s.id);
      l.set("berth_owner", s.owner_id);
      l.set("berth_org", s.organization_id);
      if (s.project_id) l.set("berth_project", s.project_id);
    }
    out.push(`${p.name}{${[...l].map(([k, v]) => `${k}="${quoteLabel(v)}"`).join(",")}} ${p.rest}`);
  }
  return { text: out.length > 0 ? `${out.join("\n")}\n` : "", lines: out.length };
}
