// Quota-increase requests: a member asks for higher limits with a reason, for themselves in an
// organization (scope `user`) or for a project they belong to (scope `project`); someone who may decide
// approves all or part of it, or denies it, with a note. Approval writes the override (overrides.ts) in
// the transaction that closes the request, which holds the request's row lock: of two concurrent
// decisions one wins, the other gets 409 `request_already_decided`, and only one override is written.
//
// Who sees a request: its requester and whoever may decide it. Who decides: super_admins; the
// organization's org_admins; for a project-scoped request also the project's project_admins. Never the
// requester, whatever their role (a person does not raise their own limits). The requester may cancel
// while pending. Notifications: the deciders when asked, the requester when decided.
import { randomBytes } from "node:crypto";
import { decideQuotaRequest } from "../../db/operations/quotas/decideQuotaRequest.ts";
import { findQuotaRequest } from "../../db/operations/quotas/findQuotaRequest.ts";
import { insertQuotaRequest } from "../../db/operations/quotas/insertQuotaRequest.ts";
import { listDeciders } from "../../db/operations/quotas/listDeciders.ts";
import { type QuotaRequestFilter, quotaRequestsQuery } from "../../db/operations/quotas/listQuotaRequests.ts";
import type { LimitValues, QuotaRequestRow } from "../../db/operations/quotas/types.ts";
import { type PagedBody, paginate } from "../../db/paging.ts";
import type { Deps } from "../../deps.ts";
import { Conflict, Forbidden, Invalid, NotFound, type ValidationIssue } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { scopeOf } from "../identity/scope.ts";
import { notify } from "../notifications/notify.ts";
import { effectiveFor, limitAt, placeOf, readPolicies } from "./effective.ts";
import { LIMIT_CEILINGS, type LimitName, REQUESTABLE, type RequestScope } from "./limits.ts";
import { lockScope, type OverrideScope, type OverrideWritten, writeOverride } from "./overrides.ts";

type D = Pick<Deps, "db" | "kube" | "clock">;

const UNIQUE_VIOLATION = "23505";
const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

function requestId(): string {
  let s = "";
  while (s.length < 20) for (const b of randomBytes(24)) if (b < 252 && s.length < 20) s += ALPHABET[b % 36];
  return `qrq_${s}`;
}

const issue = (path: (string | number)[], message: string, code = "invalid_value"): ValidationIssue => ({
  path: ["body", ...path],
  message,
  code,
});

export function mayDecide(p: Principal, r: Pick<QuotaRequestRow, "organization_id" | "project_id" | "scope">): boolean {
  const s = scopeOf(p);
  return (
    s.all ||
    s.adminOrganizations.has(r.organization_id) ||
    (r.scope === "project" && r.project_id !== null && s.adminProjects.has(r.project_id))
  );
}

function canSee(p: Principal, r: QuotaRequestRow): boolean {
  return r.requester_id === p.userId || mayDecide(p, r);
}

function overrideScopeOf(r: QuotaRequestRow): OverrideScope {
  return r.scope === "project"
    ? { kind: "project", projectId: r.project_id as string }
    : { kind: "user", userId: r.requester_id, organizationId: r.organization_id };
}

const describe = (v: LimitValues) =>
  Object.entries(v)
    .map(([k, n]) => `${k.replaceAll("_", " ")} ${n}`)
    .join(", ");

export async function askForQuota(
  deps: D,
  p: Principal,
  input: {
    organizationId: string;
    projectId?: string | undefined;
    scope: RequestScope;
    limits: Partial<Record<LimitName, number>>;
    reason: string;
  },
): Promise<QuotaRequestRow> {
  const s = scopeOf(p);
  // The place must be the caller's own: a member of the organization (a super_admin outside it has no
  // limits there to raise) and, for a project, a member of it or an administrator of its organization.
  if (!s.organizations.has(input.organizationId))
    throw new Invalid("the request is invalid", [
      issue(["organization_id"], "you are not a member of this organization", "invalid_reference"),
    ]);
  if (input.scope === "project" && input.projectId === undefined)
    throw new Invalid("the request is invalid", [
      issue(["project_id"], "a project-scoped request names its project", "required"),
    ]);
  let place: { organizationId: string; projectId: string | null };
  try {
    place = await placeOf(deps, p, input.organizationId, input.projectId);
  } catch (e) {
    if (e instanceof NotFound)
      throw new Invalid("the request is invalid", [
        issue(["project_id"], "no such project among yours in this organization", "invalid_reference"),
      ]);
    throw e;
  }
  const names = Object.keys(input.limits) as LimitName[];
  const issues: ValidationIssue[] = [];
  if (names.length === 0) issues.push(issue(["limits"], "ask for at least one limit", "too_small"));
  const policies = await readPolicies(deps);
  const site = { ...place, userId: p.userId };
  const current: Record<string, number | null> = {};
  for (const name of names) {
    if (!REQUESTABLE[input.scope].includes(name)) {
      issues.push(
        issue(
          ["limits", name],
          `not requestable for scope ${input.scope}; requestable: ${REQUESTABLE[input.scope].join(", ")}`,
          "not_requestable",
        ),
      );
      continue;
    }
    const now = limitAt(policies, name, site);
    current[name] = now?.value ?? null;
    const asked = input.limits[name] as number;
    const ceiling = LIMIT_CEILINGS[name];
    if (!now) issues.push(issue(["limits", name], "no policy limits this here: there is nothing to raise", "no_limit"));
    else if (ceiling !== undefined && asked > ceiling)
      issues.push(issue(["limits", name], `at most ${ceiling}`, "too_big"));
    else if (asked <= now.value)
      issues.push(
        issue(["limits", name], `the limit is already ${now.value} (${now.scope}); ask for more`, "too_small"),
      );
  }
  if (issues.length) throw new Invalid("the request is invalid", issues);
  const at = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    let row: QuotaRequestRow;
    try {
      row = await insertQuotaRequest(tx, {
        id: requestId(),
        organizationId: place.organizationId,
        projectId: place.projectId,
        scope: input.scope,
        requesterId: p.userId,
        asked: input.limits as LimitValues,
        current,
        reason: input.reason,
        at,
      });
    } catch (e) {
      if ((e as { code?: string }).code === UNIQUE_VIOLATION)
        throw new Conflict("you already have a pending request for this; wait for its decision or cancel it", {
          scope: input.scope,
          organization_id: place.organizationId,
          project_id: place.projectId,
        });
      throw e;
    }
    const deciders = (await listDeciders(tx, place)).filter((u) => u !== p.userId);
    await notify(
      tx,
      deciders.map((userId) => ({
        userId,
        organizationId: place.organizationId,
        kind: "quota.request_received" as const,
        title: "Quota increase requested",
        body: `${p.email} asks for ${describe(row.asked)}: ${input.reason}`,
        data: { request_id: row.id, requester_id: p.userId, scope: row.scope, project_id: row.project_id },
        at,
      })),
    );
    return row;
  });
}

export async function listQuotaRequests<Out>(
  deps: D,
  p: Principal,
  q: { page: number; size: number } & QuotaRequestFilter,
  present: (r: QuotaRequestRow) => Out,
): Promise<PagedBody<Out>> {
  const s = scopeOf(p);
  const v = {
    all: s.all,
    userId: p.userId,
    organizationIds: [...s.adminOrganizations],
    projectIds: [...s.adminProjects],
  };
  const f: QuotaRequestFilter = {};
  if (q.box) f.box = q.box;
  if (q.status) f.status = q.status;
  if (q.organizationId) f.organizationId = q.organizationId;
  return paginate(deps.db, quotaRequestsQuery(deps.db, v, f), { page: q.page, size: q.size }, present);
}

export async function getQuotaRequest(deps: Pick<Deps, "db">, p: Principal, id: string): Promise<QuotaRequestRow> {
  const r = await findQuotaRequest(deps.db, id);
  if (!r || !canSee(p, r)) throw new NotFound("quota request", id);
  return r;
}

/** Who may decide, and that the request is still open (checked again under the row lock). */
async function forDecision(deps: D, p: Principal, id: string): Promise<QuotaRequestRow> {
  const r = await getQuotaRequest(deps, p, id);
  if (r.requester_id === p.userId) throw new Forbidden("a request is decided by someone else than its requester");
  if (!mayDecide(p, r)) throw new Forbidden("only an administrator of its organization or project decides a request");
  return r;
}

const alreadyDecided = (r: QuotaRequestRow | undefined) =>
  new Conflict(
    `the request is already ${r?.status ?? "gone"}`,
    { status: r?.status ?? null, decided_by: r?.decided_by ?? null },
    "request_already_decided",
  );

export async function approveQuotaRequest(
  deps: D,
  p: Principal,
  id: string,
  input: { limits?: Partial<Record<LimitName, number>> | undefined; note?: string | undefined },
): Promise<{ request: QuotaRequestRow; override: OverrideWritten }> {
  const seen = await forDecision(deps, p, id);
  if (seen.status !== "pending") throw alreadyDecided(seen);
  const asked = seen.asked as Partial<Record<LimitName, number>>;
  const granted = input.limits ?? asked;
  const issues: ValidationIssue[] = [];
  if (Object.keys(granted).length === 0)
    issues.push(issue(["limits"], "grant at least one limit, or deny the request", "too_small"));
  for (const [name, value] of Object.entries(granted) as [LimitName, number][]) {
    const want = asked[name];
    if (want === undefined) issues.push(issue(["limits", name], "not asked for in this request", "not_asked"));
    else if (value > want) issues.push(issue(["limits", name], `at most the ${want} asked for`, "too_big"));
  }
  if (issues.length) throw new Invalid("the approval is invalid", issues);
  const partly = Object.entries(asked).some(([k, v]) => granted[k as LimitName] !== v);
  const at = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const r = await findQuotaRequest(tx, id, { forUpdate: true });
    if (r?.status !== "pending") throw alreadyDecided(r);
    const scope = overrideScopeOf(r);
    await lockScope(tx, scope);
    // Under both locks: a grant that would not raise the limit as it stands now is refused (it could
    // only lower it, or the limit was raised meanwhile).
    const policies = await readPolicies(deps);
    const site = {
      organizationId: r.organization_id,
      projectId: r.project_id,
      ...(r.scope === "user" ? { userId: r.requester_id } : {}),
    };
    const low: ValidationIssue[] = [];
    for (const [name, value] of Object.entries(granted) as [LimitName, number][]) {
      const now = limitAt(policies, name, site);
      if (now && value <= now.value)
        low.push(
          issue(["limits", name], `the limit is already ${now.value} (${now.scope}); grant more, or deny`, "too_small"),
        );
    }
    if (low.length) throw new Invalid("the approval is invalid", low);
    const override = await writeOverride(deps, scope, granted, r.id);
    const decided = await decideQuotaRequest(tx, r.id, {
      status: partly ? "partially_approved" : "approved",
      granted: granted as LimitValues,
      policyName: override.name,
      by: p.userId,
      note: input.note ?? null,
      at,
    });
    if (!decided) throw alreadyDecided(await findQuotaRequest(tx, id));
    await notify(tx, {
      userId: r.requester_id,
      organizationId: r.organization_id,
      kind: "quota.request_decided",
      title: partly ? "Quota request partly approved" : "Quota request approved",
      body: `Granted: ${describe(granted as LimitValues)} (asked: ${describe(r.asked)}).${input.note ? ` Note: ${input.note}` : ""}`,
      data: { request_id: r.id, status: decided.status, granted, policy: override.name },
      at,
    });
    return { request: decided, override };
  });
}

export async function denyQuotaRequest(
  deps: D,
  p: Principal,
  id: string,
  input: { note?: string | undefined },
): Promise<QuotaRequestRow> {
  await forDecision(deps, p, id);
  const at = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const r = await findQuotaRequest(tx, id, { forUpdate: true });
    if (r?.status !== "pending") throw alreadyDecided(r);
    const decided = await decideQuotaRequest(tx, r.id, {
      status: "denied",
      by: p.userId,
      note: input.note ?? null,
      at,
    });
    if (!decided) throw alreadyDecided(r);
    await notify(tx, {
      userId: r.requester_id,
      organizationId: r.organization_id,
      kind: "quota.request_decided",
      title: "Quota request denied",
      body: `Your request for ${describe(r.asked)} was denied.${input.note ? ` Note: ${input.note}` : ""}`,
      data: { request_id: r.id, status: "denied" },
      at,
    });
    return decided;
  });
}

export async function cancelQuotaRequest(deps: D, p: Principal, id: string): Promise<QuotaRequestRow> {
  const seen = await getQuotaRequest(deps, p, id);
  if (seen.requester_id !== p.userId) throw new Forbidden("only the requester cancels a request");
  return deps.db.transaction(async (tx) => {
    const r = await findQuotaRequest(tx, id, { forUpdate: true });
    if (r?.status !== "pending") throw alreadyDecided(r);
    const decided = await decideQuotaRequest(tx, r.id, { status: "cancelled", by: p.userId, at: deps.clock.now() });
    if (!decided) throw alreadyDecided(r);
    return decided;
  });
}

export { effectiveFor, placeOf };
