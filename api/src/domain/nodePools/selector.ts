// A node pool's selector: one label requirement, `key=value` or `key in (a,b,…)`. One requirement, so that
// "not in this pool" is one NotIn expression the kube-scheduler evaluates (a session's pod carries one per
// pool it may not use, all in one term); several requirements per pool would make that exclusion a
// disjunction per pool, and their conjunction grows exponentially in node affinity's form.
import { DomainError } from "../../errors.ts";

export interface LabelRequirement {
  key: string;
  values: string[];
}

const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const PREFIX = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function invalid(reason: string, selector: string): DomainError {
  return new DomainError("node_selector_invalid", `the selector ${JSON.stringify(selector)} ${reason}`, {
    selector,
    reason,
  });
}

function validKey(key: string): boolean {
  const slash = key.indexOf("/");
  if (slash < 0) return NAME.test(key);
  return PREFIX.test(key.slice(0, slash)) && NAME.test(key.slice(slash + 1));
}

/** Parses `key=value`, `key==value` or `key in (a, b)`; anything else is node_selector_invalid. */
export function parseSelector(selector: string): LabelRequirement {
  const s = selector.trim();
  let key: string;
  let values: string[];
  const set = /^(\S+)\s+in\s+\(([^()]*)\)$/.exec(s);
  const eq = /^([^=\s!]+)\s*==?\s*([^=\s,]+)$/.exec(s);
  if (set) {
    key = set[1] as string;
    values = (set[2] as string)
      .split(",")
      .map((v) => v.trim())
      .filter((v) => v !== "");
  } else if (eq) {
    key = eq[1] as string;
    values = [eq[2] as string];
  } else throw invalid("is not one label requirement: write key=value or key in (a,b)", selector);
  if (!validKey(key)) throw invalid(`has an invalid label key ${JSON.stringify(key)}`, selector);
  if (values.length === 0) throw invalid("names no value", selector);
  if (values.length > 64) throw invalid("names more than 64 values", selector);
  const bad = values.find((v) => !NAME.test(v));
  if (bad !== undefined) throw invalid(`has an invalid label value ${JSON.stringify(bad)}`, selector);
  return { key, values: [...new Set(values)].sort() };
}

export function formatSelector(r: LabelRequirement): string {
  return r.values.length === 1 ? `${r.key}=${r.values[0]}` : `${r.key} in (${r.values.join(",")})`;
}

export function matches(r: LabelRequirement, labels: Record<string, string>): boolean {
  const v = labels[r.key];
  return v !== undefined && r.values.includes(v);
}

/**
 * Where two selectors meet: on every node, now and later, when they share a label value (`always`), and on
 * the reported nodes both match now. Node pools and MIG layouts refuse a new selector that meets another.
 */
export function overlapOf(
  a: LabelRequirement,
  b: LabelRequirement,
  nodes: readonly { name: string; labels: Record<string, string> | null }[],
): { always: boolean; nodes: string[] } | undefined {
  const always = a.key === b.key && a.values.some((v) => b.values.includes(v));
  const both = nodes.filter((n) => matches(a, n.labels ?? {}) && matches(b, n.labels ?? {})).map((n) => n.name);
  return always || both.length > 0 ? { always, nodes: both } : undefined;
}
