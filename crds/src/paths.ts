// Where a Berth resource lives on a Kubernetes API server: the one spelling of its REST path, so no caller
// writes `/apis/berth.dev/...` by hand (scripts/boundaries.test.ts keeps it so).

/** What a path needs of a kind (every `defineKind` result has it). */
export interface KindPath {
  group: string;
  version: string;
  plural: string;
  namespaced: boolean;
}

export interface ResourceWhere {
  /** A namespaced kind's namespace; absent: the kind's list across all namespaces. */
  namespace?: string;
  /** Absent: the collection. */
  name?: string;
  subresource?: "status" | "finalizers";
}

/**
 * `/apis/{group}/{version}[/namespaces/{ns}]/{plural}[/{name}[/{subresource}]]`, every segment encoded.
 * A namespace given for a cluster-scoped kind, or a subresource without a name, is a caller's mistake.
 */
export function resourcePath(kind: KindPath, where: ResourceWhere = {}): string {
  const { namespace, name, subresource } = where;
  if (namespace !== undefined && !kind.namespaced) throw new Error(`${kind.plural} are cluster-scoped: no namespace`);
  if (subresource && name === undefined) throw new Error(`a ${subresource} subresource needs a name`);
  const scope = namespace === undefined ? "" : `/namespaces/${encodeURIComponent(namespace)}`;
  const base = `/apis/${kind.group}/${kind.version}${scope}/${kind.plural}`;
  if (name === undefined) return base;
  return `${base}/${encodeURIComponent(name)}${subresource ? `/${subresource}` : ""}`;
}
