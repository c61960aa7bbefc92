// The policy keeper's decision (policy-keeper.ts), pure: the sessions namespace's one NetworkPolicy as
// observed → nothing, create, or put ours back. Apart from the mirror's plan (plan.ts): one object per
// namespace, not per session, with its own keeper.
import { type KubeObjectMeta, type MirrorManifestOptions, sessionsNetworkPolicyManifest } from "./manifests.ts";

export interface PolicyView {
  metadata: KubeObjectMeta;
  spec?: unknown;
}

export type PolicyAction =
  | { kind: "none" }
  | { kind: "create"; manifest: ReturnType<typeof sessionsNetworkPolicyManifest> }
  /** Someone changed it: put ours back (optimistically, with the resourceVersion read). */
  | {
      kind: "replace";
      manifest: ReturnType<typeof sessionsNetworkPolicyManifest> & { metadata: { resourceVersion?: string } };
    };

/**
 * The sessions namespace's NetworkPolicy: created when absent (or going), put back when its rule is not
 * ours, left alone otherwise — so a resync or a watch event costs no write.
 */
export function planSessionsPolicy(observed: PolicyView | undefined, opts: MirrorManifestOptions): PolicyAction {
  const manifest = sessionsNetworkPolicyManifest(opts);
  if (!observed || observed.metadata.deletionTimestamp) return { kind: "create", manifest };
  if (sameAs(manifest.spec, observed.spec)) return { kind: "none" };
  return {
    kind: "replace",
    manifest: {
      ...manifest,
      metadata: {
        ...manifest.metadata,
        ...(observed.metadata.resourceVersion ? { resourceVersion: observed.metadata.resourceVersion } : {}),
      },
    },
  };
}

/**
 * Whether what the apiserver holds says exactly what we wrote: the same fields with the same values
 * (arrays element by element), where a field left empty counts as absent. Any field we did not set
 * (matchExpressions, an ipBlock peer, an egress rule, endPort) changes whom the policy admits.
 */
function sameAs(desired: unknown, observed: unknown): boolean {
  if (Array.isArray(desired))
    return (
      Array.isArray(observed) && observed.length === desired.length && desired.every((d, i) => sameAs(d, observed[i]))
    );
  if (desired !== null && typeof desired === "object") {
    if (observed === null || typeof observed !== "object" || Array.isArray(observed)) return false;
    const d = desired as Record<string, unknown>;
    const o = observed as Record<string, unknown>;
    const set = (x: Record<string, unknown>) => Object.keys(x).filter((k) => !isEmpty(x[k]));
    const keys = set(d);
    const theirs = set(o);
    return theirs.length === keys.length && keys.every((k) => sameAs(d[k], o[k]));
  }
  return desired === observed;
}

function isEmpty(v: unknown): boolean {
  return (
    v === undefined ||
    v === null ||
    (Array.isArray(v) && v.length === 0) ||
    (typeof v === "object" && !Array.isArray(v) && Object.keys(v as object).length === 0)
  );
}
