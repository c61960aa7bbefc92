// Kubernetes RBAC rules as data (the shape of rbac.authorization.k8s.io/v1 PolicyRule). Each deployable
// lists what it needs in this shape (operator/src/rbac.ts, api/src/rbac.ts), so that the
// test bed mints exactly those grants, the registration probe checks them, and manifests can be made of them.
export interface PolicyRule {
  apiGroups?: string[];
  /** `pods/eviction` style for subresources. */
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
  verbs: string[];
}

export interface NamespaceRules {
  namespace: string;
  rules: PolicyRule[];
}

/** One deployable's grants: a ClusterRole's rules, and a Role per namespace. */
export interface DeployableRbac {
  /** Bound with a ClusterRoleBinding. */
  clusterRules: PolicyRule[];
  /** One Role and RoleBinding per namespace. */
  namespaceRules: NamespaceRules[];
}
