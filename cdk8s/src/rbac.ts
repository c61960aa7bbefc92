// A ServiceAccount and its grants, made from a deployable's own rule list (@berth/crds PolicyRule): the
// operator's operatorRbac(), the API's and worker's lists in @berth/api. The code and the manifests read
// the same data, so a grant cannot drift from what the code was tested with.
import type { DeployableRbac, PolicyRule } from "@berth/crds";
import { ApiObject } from "cdk8s";
import { Construct } from "constructs";

/** One account's grants: crds' DeployableRbac, the shape every deployable's rule list already has. */
export type RuleList = DeployableRbac;

/** Several lists as one account's; rules of the same namespace share one Role. */
export function mergeRules(...lists: RuleList[]): RuleList {
  const byNs = new Map<string, PolicyRule[]>();
  for (const l of lists)
    for (const n of l.namespaceRules) byNs.set(n.namespace, [...(byNs.get(n.namespace) ?? []), ...n.rules]);
  return {
    clusterRules: lists.flatMap((l) => l.clusterRules),
    namespaceRules: [...byNs].map(([namespace, rules]) => ({ namespace, rules })),
  };
}

export interface ServiceAccountWithRulesOptions {
  name: string;
  namespace: string;
  rules: RuleList;
  labels: Record<string, string>;
  /** Also mount a token in pods by default (false: only pods that ask for it). */
  automountToken?: boolean;
}

/** Copies a rule without undefined fields (they would synthesize as nulls). */
const clean = (r: PolicyRule): PolicyRule => JSON.parse(JSON.stringify(r));

export class ServiceAccountWithRules extends Construct {
  readonly name: string;
  constructor(scope: Construct, id: string, o: ServiceAccountWithRulesOptions) {
    super(scope, id);
    this.name = o.name;
    const metadata = (extra: Record<string, string> = {}) => ({ name: o.name, labels: o.labels, ...extra });
    const subject = [{ kind: "ServiceAccount", name: o.name, namespace: o.namespace }];
    new ApiObject(this, "sa", {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: metadata({ namespace: o.namespace }),
      automountServiceAccountToken: o.automountToken ?? false,
    });
    if (o.rules.clusterRules.length > 0) {
      new ApiObject(this, "cr", {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: metadata(),
        rules: o.rules.clusterRules.map(clean),
      });
      new ApiObject(this, "crb", {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        metadata: metadata(),
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: o.name },
        subjects: subject,
      });
    }
    for (const n of o.rules.namespaceRules) {
      new ApiObject(this, `role-${n.namespace}`, {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: metadata({ namespace: n.namespace }),
        rules: n.rules.map(clean),
      });
      new ApiObject(this, `rb-${n.namespace}`, {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: metadata({ namespace: n.namespace }),
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: o.name },
        subjects: subject,
      });
    }
  }
}

/** Rules counted as (group, resource, verb) grants, the unit a removed rule is measured in. */
export function grantCount(r: RuleList): number {
  const n = (rule: PolicyRule) =>
    (rule.apiGroups?.length ?? 1) * (rule.resources?.length ?? rule.nonResourceURLs?.length ?? 1) * rule.verbs.length;
  return [...r.clusterRules, ...r.namespaceRules.flatMap((x) => x.rules)].reduce((s, rule) => s + n(rule), 0);
}

/** One thing a rule list allows: a verb on a resource (`pods/log` style), cluster-wide or in a namespace. */
export interface Grant {
  verb: string;
  group: string;
  resource: string;
  namespace?: string;
}

export const grantKey = (g: Grant) =>
  `${g.verb} ${g.resource}${g.group ? `.${g.group}` : ""}${g.namespace ? ` in ${g.namespace}` : ""}`;

export function grantsOf(r: RuleList): Grant[] {
  const out: Grant[] = [];
  const add = (rule: PolicyRule, namespace?: string) => {
    for (const group of rule.apiGroups ?? [""])
      for (const resource of rule.resources ?? [])
        for (const verb of rule.verbs) out.push({ verb, group, resource, ...(namespace ? { namespace } : {}) });
  };
  for (const rule of r.clusterRules) add(rule);
  for (const n of r.namespaceRules) for (const rule of n.rules) add(rule, n.namespace);
  return out;
}

/** A request as the apiserver's audit log records it. */
export interface AuditedRequest {
  verb: string;
  group: string;
  /** With the subresource: `pods/eviction`. */
  resource: string;
  namespace?: string;
}

/** Does `g` allow `req`? A cluster-wide grant covers every namespace; a namespaced one only its own. */
export function allows(g: Grant, req: AuditedRequest): boolean {
  return (
    g.verb === req.verb &&
    g.group === req.group &&
    g.resource === req.resource &&
    (g.namespace === undefined || g.namespace === req.namespace)
  );
}
