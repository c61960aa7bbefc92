// Credit requests: a member asks for credits with a reason, for their own wallet in an organization or
// for a project's wallet they belong to; an administrator approves (all), partly approves (less), or
// denies. Approval is an allocation from a wallet the approver manages (by default the organization's),
// made once (the ledger key `request:<id>`) in the same transaction that closes the request. The
// requester is notified of the decision.
//
// Who sees a request: its requester, the organization's admins, the admins of its project (if any).
// Who decides: whoever sees it and manages the paying wallet. The requester may cancel while pending.

import {
  type CreditRequestRow,
  creditRequestsQuery,
  decideCreditRequest,
  findCreditRequest,
  insertCreditRequest,
} from "../../db/operations/ledger/creditRequests.ts";
import { findWalletsByOwners } from "../../db/operations/ledger/findWallets.ts";
import { findProjectById } from "../../db/operations/projects/findProjectById.ts";
import { type PagedBody, paginate } from "../../db/paging.ts";
import type { Deps } from "../../deps.ts";
import { Conflict, DomainError, Forbidden, Invalid, NotFound } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { canSeeOrganization, scopeOf } from "../identity/scope.ts";
import { notify } from "../notifications/notify.ts";
import { walletFor } from "./access.ts";
import { billingId } from "./ids.ts";
import { transfer } from "./ledger.ts";
import { formatCredits } from "./money.ts";
import { ensureWallet } from "./wallets.ts";

type D = Pick<Deps, "db" | "clock">;

export function canSeeRequest(
  p: Principal,
  r: Pick<CreditRequestRow, "requester_id" | "organization_id" | "project_id">,
): boolean {
  const s = scopeOf(p);
  return (
    s.all ||
    r.requester_id === p.userId ||
    s.adminOrganizations.has(r.organization_id) ||
    (r.project_id !== null && s.adminProjects.has(r.project_id))
  );
}

export async function askForCredits(
  deps: D,
  p: Principal,
  input: { organizationId: string; projectId?: string | undefined; amount: bigint; reason: string },
): Promise<CreditRequestRow> {
  const s = scopeOf(p);
  const issue = (field: string, message: string) =>
    new Invalid("the request is invalid", [{ path: ["body", field], message, code: "invalid_reference" }]);
  if (!canSeeOrganization(s, input.organizationId)) throw issue("organization_id", "no such organization among yours");
  let walletOwner: { kind: "user" | "project"; id: string } = { kind: "user", id: p.userId };
  if (input.projectId) {
    const project = await findProjectById(deps.db, input.projectId);
    const mine =
      project &&
      project.organization_id === input.organizationId &&
      (s.all || s.projects.has(project.id) || s.adminOrganizations.has(project.organization_id));
    if (!mine) throw issue("project_id", "no such project among yours in this organization");
    walletOwner = { kind: "project", id: input.projectId };
  } else if (!s.organizations.has(input.organizationId)) {
    // A super_admin outside the organization has no wallet of their own there.
    throw issue("organization_id", "you are not a member of this organization");
  }
  const now = deps.clock.now();
  const { wallet } = await ensureWallet(deps.db, { organizationId: input.organizationId, ...walletOwner }, now);
  return insertCreditRequest(deps.db, {
    id: billingId("crq"),
    walletId: wallet.id,
    organizationId: input.organizationId,
    projectId: input.projectId ?? null,
    requesterId: p.userId,
    amount: input.amount,
    reason: input.reason,
    at: now,
  });
}

export async function listCreditRequests<Out>(
  deps: D,
  p: Principal,
  q: { page: number; size: number; status?: string | undefined; organization?: string | undefined },
  present: (r: CreditRequestRow) => Out,
): Promise<PagedBody<Out>> {
  const s = scopeOf(p);
  const v = {
    all: s.all,
    requesterId: p.userId,
    organizationIds: [...s.adminOrganizations],
    projectIds: [...s.adminProjects],
  };
  const f: { status?: string; organizationId?: string } = {};
  if (q.status) f.status = q.status;
  if (q.organization && canSeeOrganization(s, q.organization)) f.organizationId = q.organization;
  return paginate(deps.db, creditRequestsQuery(deps.db, v, f), { page: q.page, size: q.size }, present);
}

export async function getCreditRequest(deps: D, p: Principal, id: string): Promise<CreditRequestRow> {
  const r = await findCreditRequest(deps.db, id);
  if (!r || !canSeeRequest(p, r)) throw new NotFound("credit request", id);
  return r;
}

export async function approveCreditRequest(
  deps: D,
  p: Principal,
  id: string,
  input: { amount?: bigint | undefined; fromWalletId?: string | undefined; note?: string | undefined },
  ctx: { requestId: string },
): Promise<CreditRequestRow> {
  const seen = await getCreditRequest(deps, p, id);
  if (seen.requester_id === p.userId && !p.isSuperAdmin)
    throw new Forbidden("a request is decided by someone else than its requester");
  const fromId = input.fromWalletId ?? (await organizationWalletId(deps, seen.organization_id));
  if (!fromId) throw new Conflict("the organization has no wallet to pay from; name one with from_wallet_id");
  const { wallet: from } = await walletFor(deps.db, p, fromId, "manage");
  if (from.organization_id !== seen.organization_id)
    throw new DomainError("bad_request", "the paying wallet must belong to the request's organization");
  if (from.id === seen.wallet_id) throw new DomainError("bad_request", "a wallet cannot pay itself");
  const asked = BigInt(seen.amount);
  const amount = input.amount ?? asked;
  if (amount > asked)
    throw new Invalid("the request is invalid", [
      { path: ["body", "amount"], message: "at most the amount asked for", code: "too_big" },
    ]);
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const r = await findCreditRequest(tx, id, { forUpdate: true });
    if (r?.status !== "pending")
      throw new Conflict(`the request is ${r?.status ?? "gone"}`, { status: r?.status ?? null });
    const moved = await transfer(tx, {
      kind: "request",
      fromWalletId: from.id,
      toWalletId: r.wallet_id,
      amount,
      actorKind: "user",
      actorId: p.userId,
      requestId: ctx.requestId,
      reason: `credit request ${r.id}: ${r.reason}`,
      organizationId: r.organization_id,
      idempotencyKey: `request:${r.id}`,
      metadata: { credit_request: r.id },
      at: now,
    });
    const partly = amount < asked;
    const decided = await decideCreditRequest(tx, r.id, {
      status: partly ? "partially_approved" : "approved",
      approvedAmount: amount,
      by: p.userId,
      note: input.note ?? null,
      txnSeq: moved.transaction?.seq ?? null,
      at: now,
    });
    await notify(tx, {
      userId: r.requester_id,
      organizationId: r.organization_id,
      kind: partly ? "credits.request_partially_approved" : "credits.request_approved",
      title: partly ? "Credit request partly approved" : "Credit request approved",
      body: `${formatCredits(amount)} of the ${formatCredits(asked)} credits you asked for were added to your wallet.${input.note ? ` Note: ${input.note}` : ""}`,
      data: { request_id: r.id, wallet_id: r.wallet_id, amount: amount.toString(), asked: asked.toString() },
      at: now,
    });
    return decided;
  });
}

export async function denyCreditRequest(
  deps: D,
  p: Principal,
  id: string,
  input: { note?: string | undefined },
): Promise<CreditRequestRow> {
  const seen = await getCreditRequest(deps, p, id);
  const s = scopeOf(p);
  const decider =
    s.all ||
    s.adminOrganizations.has(seen.organization_id) ||
    (seen.project_id !== null && s.adminProjects.has(seen.project_id));
  if (!decider || (seen.requester_id === p.userId && !s.all))
    throw new Forbidden("only an administrator decides a request");
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const r = await findCreditRequest(tx, id, { forUpdate: true });
    if (r?.status !== "pending")
      throw new Conflict(`the request is ${r?.status ?? "gone"}`, { status: r?.status ?? null });
    const decided = await decideCreditRequest(tx, r.id, {
      status: "denied",
      by: p.userId,
      note: input.note ?? null,
      at: now,
    });
    await notify(tx, {
      userId: r.requester_id,
      organizationId: r.organization_id,
      kind: "credits.request_denied",
      title: "Credit request denied",
      body: `Your request for ${formatCredits(BigInt(r.amount))} credits was denied.${input.note ? ` Note: ${input.note}` : ""}`,
      data: { request_id: r.id, wallet_id: r.wallet_id },
      at: now,
    });
    return decided;
  });
}

export async function cancelCreditRequest(deps: D, p: Principal, id: string): Promise<CreditRequestRow> {
  const seen = await getCreditRequest(deps, p, id);
  if (seen.requester_id !== p.userId) throw new Forbidden("only the requester cancels a request");
  return deps.db.transaction(async (tx) => {
    const r = await findCreditRequest(tx, id, { forUpdate: true });
    if (r?.status !== "pending")
      throw new Conflict(`the request is ${r?.status ?? "gone"}`, { status: r?.status ?? null });
    return decideCreditRequest(tx, r.id, { status: "cancelled", by: p.userId, at: deps.clock.now() });
  });
}

async function organizationWalletId(deps: D, organizationId: string): Promise<string | undefined> {
  const [w] = await findWalletsByOwners(deps.db, [{ organizationId, kind: "organization", id: organizationId }]);
  return w?.id;
}
