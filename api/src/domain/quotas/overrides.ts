// The policy an approved request writes: the ResourcePolicy of the request's user (in its organization)
// or project, changed only in the granted limits. When a policy for that scope exists (an administrator's
// or an earlier approval's), the granted limits are merged into it; otherwise one is created with only
// them, so every other limit still comes from the wider scopes. An approval never lowers a limit: a
// value already higher in that policy stays.
//
// The trap: two approvals for the same user or project (two requests, or two API replicas) must not
// both create a policy or overwrite each other's merge. The caller holds an advisory lock on the
// scope in its transaction (`lockScope`); an administrator's concurrent PATCH is caught by the
// resourceVersion of the replace (409 from the apiserver), and the merge is read and tried again.
import { type ResourcePolicy, ResourcePolicyKind } from "@berth/crds";
import type { Knex } from "knex";
import type { Deps } from "../../deps.ts";
import { Conflict } from "../../errors.ts";
import { catalogClient, createObject, type KubeObject, kubeStatus, replaceObject } from "../catalog/store.ts";
import { readPolicies } from "./effective.ts";
import { IDLE_LIMIT_NAMES, isIdleLimit, LIMIT_NAMES, type LimitName } from "./limits.ts";

export type OverrideScope =
  | { kind: "user"; userId: string; organizationId: string }
  | { kind: "project"; projectId: string };

export function lockScope(tx: Knex.Transaction, scope: OverrideScope): Promise<unknown> {
  const key =
    scope.kind === "user" ? `quota:user:${scope.organizationId}:${scope.userId}` : `quota:project:${scope.projectId}`;
  return tx.raw("SELECT pg_advisory_xact_lock(hashtextextended(?, 7))", [key]);
}

/** Object names allow [a-z0-9-]: ids (`usr_…`) lose their underscore. */
const dns = (id: string) => id.toLowerCase().replace(/[^a-z0-9-]/g, "-");

export function overrideName(scope: OverrideScope): string {
  return scope.kind === "user"
    ? `user-${dns(scope.userId)}-in-${dns(scope.organizationId)}`
    : `project-${dns(scope.projectId)}`;
}

/** The policy that speaks for the scope: the first by name, as the quota gate picks it. */
function existingFor(policies: readonly ResourcePolicy[], scope: OverrideScope): ResourcePolicy | undefined {
  return [...policies]
    .sort((a, b) => (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""))
    .find((p) =>
      scope.kind === "user"
        ? p.spec.scope.kind === "user" &&
          p.spec.scope.id === scope.userId &&
          p.spec.scope.organization === scope.organizationId
        : p.spec.scope.kind === "project" && p.spec.scope.id === scope.projectId,
    );
}

export interface OverrideWritten {
  name: string;
  before: ResourcePolicy["spec"] | null;
  after: ResourcePolicy["spec"];
}

export async function writeOverride(
  deps: Pick<Deps, "kube">,
  scope: OverrideScope,
  granted: Partial<Record<LimitName, number>>,
  requestId: string,
): Promise<OverrideWritten> {
  const api = catalogClient(deps.kube);
  for (let attempt = 0; ; attempt++) {
    const current = existingFor(await readPolicies(deps), scope);
    const limits: Record<string, number> = { ...(current?.spec.limits ?? {}) };
    // Idle limits live in spec.idle (api/src/domain/catalog/reclaimPolicy.ts reads them there).
    const idle: Record<string, number> = { ...(current?.spec.idle ?? {}) };
    for (const [wire, value] of Object.entries(granted) as [LimitName, number][]) {
      const [into, key] = isIdleLimit(wire) ? [idle, IDLE_LIMIT_NAMES[wire]] : [limits, LIMIT_NAMES[wire]];
      const had = into[key];
      if (had === undefined || had < value) into[key] = value;
    }
    const idlePart = Object.keys(idle).length > 0 ? { idle } : {};
    try {
      if (current) {
        const spec = { ...current.spec, limits, ...idlePart };
        const body = ResourcePolicyKind.build(current.metadata as never, spec as never) as unknown as KubeObject;
        await replaceObject(api, ResourcePolicyKind as never, body);
        return { name: current.metadata.name as string, before: current.spec, after: spec };
      }
      const spec = {
        scope:
          scope.kind === "user"
            ? { kind: "user" as const, id: scope.userId, organization: scope.organizationId }
            : { kind: "project" as const, id: scope.projectId },
        limits,
        ...idlePart,
      };
      const name = overrideName(scope);
      const body = ResourcePolicyKind.build(
        {
          name,
          labels: { "app.kubernetes.io/part-of": "berth" },
          annotations: { "berth.dev/quota-request": requestId },
        } as never,
        spec as never,
      ) as unknown as KubeObject;
      await createObject(api, ResourcePolicyKind as never, body);
      return { name, before: null, after: body.spec as ResourcePolicy["spec"] };
    } catch (e) {
      // Changed or created meanwhile by someone not holding our lock (an administrator): read again.
      if (kubeStatus(e) === 409 && attempt < 4) continue;
      if (kubeStatus(e) === 409)
        throw new Conflict("the policy kept changing while the approval was written; try again", {
          policy: current?.metadata.name ?? overrideName(scope),
        });
      throw e;
    }
  }
}
