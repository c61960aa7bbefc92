// /api/v1/credits: wallets and their ledgers, allocations, credit requests and refills
// (docs/dev/billing.md). Every creating or money-moving write takes an Idempotency-Key; amounts are
// strings of minor units (1 credit = 1,000,000).
import { z } from "zod";
import { Paged } from "../../db/paging.ts";
import { allocate } from "../../domain/credits/allocate.ts";
import { exportWalletLedger } from "../../domain/credits/exportLedger.ts";
import { changeWallet, getWallet, listWallets, openWallet, walletLedger } from "../../domain/credits/manageWallets.ts";
import { listMovements } from "../../domain/credits/movements.ts";
import { changeRefill, createRefill, historyOf, listRefills } from "../../domain/credits/refills.ts";
import {
  approveCreditRequest,
  askForCredits,
  cancelCreditRequest,
  denyCreditRequest,
  getCreditRequest,
  listCreditRequests,
} from "../../domain/credits/requests.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import {
  CSV_HEADER,
  ledgerCsvRow,
  presentCreditRequest,
  presentLedgerLine,
  presentMovement,
  presentRefill,
  presentRefillApplication,
  presentWallet,
} from "./presenter.ts";
import {
  AllocateBody,
  Allocation,
  ApproveBody,
  AskBody,
  ChangeRefillBody,
  ChangeWalletBody,
  CreateRefillBody,
  CreditRequest,
  DenyBody,
  LedgerExportQuery,
  LedgerLine,
  LedgerQuery,
  ListAllocationsQuery,
  ListRequestsQuery,
  ListWalletsQuery,
  OpenWalletBody,
  Refill,
  RefillDetail,
  RefillParams,
  RequestParams,
  Wallet,
  WalletParams,
} from "./schemas.ts";

const TAGS = ["credits"];
const units = (s: string) => BigInt(s);
const ledgerFilter = (q: { from?: string | undefined; to?: string | undefined; kind?: string | undefined }) => ({
  ...(q.from ? { from: new Date(q.from) } : {}),
  ...(q.to ? { to: new Date(q.to) } : {}),
  ...(q.kind ? { kinds: q.kind.split(",") } : {}),
});

export const listWalletsRoute = defineRoute({
  method: "get",
  path: "/api/v1/credits/wallets",
  operationId: "listWallets",
  tags: TAGS,
  summary: "The wallets you may see",
  description:
    "Your own wallet in each of your organizations, your projects' wallets, every wallet of the organizations you administer, your project members' wallets if you administer a project; super_admins see all (and the system wallet). Filters outside your scope are ignored. Amounts are strings of minor units (1 credit = 1000000).",
  auth: "user",
  query: ListWalletsQuery,
  responses: { 200: Paged(Wallet) },
  handler: async ({ deps, principal, query }) => ({
    status: 200,
    body: await listWallets(deps, principal, query, (w) => presentWallet(w)),
  }),
});

export const openWalletRoute = defineRoute({
  method: "post",
  path: "/api/v1/credits/wallets",
  operationId: "openWallet",
  tags: TAGS,
  summary: "Open a wallet for an organization, one of its projects or one of its members (its org_admins)",
  description:
    "Opening a wallet that exists answers it with 200; a new one is 201. Its Wallet resource (kubectl get wallets) follows within seconds.",
  auth: "user",
  body: OpenWalletBody,
  idempotent: true,
  audit: "credits.wallet.open",
  errors: ["not_found", "conflict", "already_exists"],
  responses: { 200: Wallet, 201: Wallet },
  handler: async ({ deps, principal, body, audit }) => {
    audit.organization(body.organization_id);
    const { wallet, created } = await openWallet(deps, principal, {
      organizationId: body.organization_id,
      ownerKind: body.owner_kind,
      ownerId: body.owner_id,
      displayName: body.display_name,
    });
    audit.target("wallet", wallet.id);
    return { status: created ? 201 : 200, body: presentWallet(wallet) };
  },
});

export const getWalletRoute = defineRoute({
  method: "get",
  path: "/api/v1/credits/wallets/:walletId",
  operationId: "getWallet",
  tags: TAGS,
  summary: "A wallet: balance, what it can spend, limits",
  auth: "user",
  params: WalletParams,
  responses: { 200: Wallet },
  handler: async ({ deps, principal, params }) => ({
    status: 200,
    body: presentWallet(await getWallet(deps, principal, params.walletId)),
  }),
});

export const changeWalletRoute = defineRoute({
  method: "patch",
  path: "/api/v1/credits/wallets/:walletId",
  operationId: "changeWallet",
  tags: TAGS,
  summary: "Change a wallet's name or limits (its managers; the overdraft: super_admins)",
  auth: "user",
  params: WalletParams,
  body: ChangeWalletBody,
  idempotent: true,
  audit: "credits.wallet.change",
  errors: ["conflict"],
  responses: { 200: Wallet },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.target("wallet", params.walletId);
    const l = body.limits ?? {};
    const w = await changeWallet(deps, principal, params.walletId, {
      ...(body.display_name !== undefined ? { displayName: body.display_name } : {}),
      ...(l.overdraft !== undefined ? { overdraft: units(l.overdraft) } : {}),
      ...(l.max_spend_per_day !== undefined
        ? { maxSpendPerDay: l.max_spend_per_day === null ? null : units(l.max_spend_per_day) }
        : {}),
      ...(l.max_spend_per_month !== undefined
        ? { maxSpendPerMonth: l.max_spend_per_month === null ? null : units(l.max_spend_per_month) }
        : {}),
    });
    if (w.organization_id) audit.organization(w.organization_id);
    return { status: 200, body: presentWallet(w) };
  },
});

export const walletLedgerRoute = defineRoute({
  method: "get",
  path: "/api/v1/credits/wallets/:walletId/ledger",
  operationId: "getWalletLedger",
  tags: TAGS,
  summary: "A wallet's ledger, newest first, with the balance after each line",
  description:
    "Filters: `from` (inclusive), `to` (exclusive), `kind` (comma-separated). Each charge names the usage interval it billed; each movement its audit request id.",
  auth: "user",
  params: WalletParams,
  query: LedgerQuery,
  responses: { 200: Paged(LedgerLine) },
  handler: async ({ deps, principal, params, query }) => ({
    status: 200,
    body: await walletLedger(
      deps,
      principal,
      params.walletId,
      { page: query.page, size: query.size, ...ledgerFilter(query) },
      presentLedgerLine,
    ),
  }),
});

export const walletLedgerExportRoute = defineRoute({
  method: "get",
  path: "/api/v1/credits/wallets/:walletId/ledger/export",
  operationId: "exportWalletLedger",
  tags: TAGS,
  summary: "A wallet's ledger as CSV (text/csv), newest first, with the same filters",
  auth: "user",
  params: WalletParams,
  query: LedgerExportQuery,
  errors: ["not_found"],
  produces: { "text/csv": z.string().meta({ description: "Amounts in minor units." }) },
  responses: { 200: z.string().meta({ description: "text/csv; amounts in minor units." }) },
  handler: async ({ deps, principal, params, query }) => {
    const ledger = await exportWalletLedger(deps, principal, params.walletId, ledgerFilter(query));
    async function* lines(): AsyncGenerator<string> {
      yield CSV_HEADER;
      for await (const rows of ledger.pages) for (const row of rows) yield ledgerCsvRow(row);
    }
    return { kind: "csv", filename: `ledger-${ledger.walletId}.csv`, body: lines() };
  },
});

export const listAllocationsRoute = defineRoute({
  method: "get",
  path: "/api/v1/credits/allocations",
  operationId: "listAllocations",
  tags: TAGS,
  summary: "Credit movements between wallets you may see (allocations, grants, approved requests, refills, reversals)",
  auth: "user",
  query: ListAllocationsQuery,
  responses: { 200: Paged(Allocation) },
  handler: async ({ deps, principal, query }) => ({
    status: 200,
    body: await listMovements(deps, principal, query, presentMovement),
  }),
});

export const allocateRoute = defineRoute({
  method: "post",
  path: "/api/v1/credits/allocations",
  operationId: "allocateCredits",
  tags: TAGS,
  summary:
    "Move credits between two wallets of an organization (down, or back up); super_admins issue from the system wallet",
  description:
    "You must manage the paying wallet and see the receiving one; both belong to one organization (or one is the system wallet and the other an organization's). A paying wallet that cannot cover the amount: 409 `insufficient_credits` with `details.spendable`. Repeat with the same Idempotency-Key to retry safely: the credits move once.",
  auth: "user",
  body: AllocateBody,
  idempotent: true,
  audit: "credits.allocate",
  errors: ["not_found", "bad_request", "insufficient_credits"],
  responses: { 201: Allocation },
  handler: async ({ deps, principal, body, requestId, audit, ctx }) => {
    const key = ctx.get("Idempotency-Key");
    const r = await allocate(
      deps,
      principal,
      {
        fromWalletId: body.from_wallet_id,
        toWalletId: body.to_wallet_id,
        amount: units(body.amount),
        reason: body.reason,
      },
      { requestId, ...(key ? { idempotencyKey: key } : {}) },
    );
    const t = r.transaction;
    if (!t) throw new Error("an allocation of a positive amount always writes a transaction");
    audit.target("ledger_transaction", t.id);
    if (t.organization_id) audit.organization(t.organization_id);
    audit.detail("amount", t.amount);
    audit.detail("from_wallet_id", r.from.id);
    audit.detail("to_wallet_id", r.to.id);
    return {
      status: 201,
      body: presentMovement({ ...t, from_wallet_id: r.from.id, to_wallet_id: r.to.id }),
    };
  },
});

export const listRequestsRoute = defineRoute({
  method: "get",
  path: "/api/v1/credits/requests",
  operationId: "listCreditRequests",
  tags: TAGS,
  summary: "Credit requests: yours, and those you may decide",
  auth: "user",
  query: ListRequestsQuery,
  responses: { 200: Paged(CreditRequest) },
  handler: async ({ deps, principal, query }) => ({
    status: 200,
    body: await listCreditRequests(deps, principal, query, presentCreditRequest),
  }),
});

export const askRoute = defineRoute({
  method: "post",
  path: "/api/v1/credits/requests",
  operationId: "requestCredits",
  tags: TAGS,
  summary: "Ask for credits, with a reason, for your wallet in an organization or for a project's wallet",
  auth: "user",
  body: AskBody,
  idempotent: true,
  audit: "credits.request.create",
  errors: ["not_found"],
  responses: { 201: CreditRequest },
  handler: async ({ deps, principal, body, audit }) => {
    audit.organization(body.organization_id);
    const r = await askForCredits(deps, principal, {
      organizationId: body.organization_id,
      projectId: body.project_id,
      amount: units(body.amount),
      reason: body.reason,
    });
    audit.target("credit_request", r.id);
    return { status: 201, body: presentCreditRequest(r) };
  },
});

export const getRequestRoute = defineRoute({
  method: "get",
  path: "/api/v1/credits/requests/:requestId",
  operationId: "getCreditRequest",
  tags: TAGS,
  summary: "A credit request",
  auth: "user",
  params: RequestParams,
  responses: { 200: CreditRequest },
  handler: async ({ deps, principal, params }) => ({
    status: 200,
    body: presentCreditRequest(await getCreditRequest(deps, principal, params.requestId)),
  }),
});

export const approveRoute = defineRoute({
  method: "post",
  path: "/api/v1/credits/requests/:requestId/approve",
  operationId: "approveCreditRequest",
  tags: TAGS,
  summary: "Approve a request, all of it or part (an allocation from a wallet you manage); the requester is notified",
  auth: "user",
  params: RequestParams,
  body: ApproveBody,
  idempotent: true,
  audit: "credits.request.approve",
  errors: ["not_found", "conflict", "bad_request", "insufficient_credits"],
  responses: { 200: CreditRequest },
  handler: async ({ deps, principal, params, body, requestId, audit }) => {
    audit.target("credit_request", params.requestId);
    const r = await approveCreditRequest(
      deps,
      principal,
      params.requestId,
      {
        amount: body.amount === undefined ? undefined : units(body.amount),
        fromWalletId: body.from_wallet_id,
        note: body.note,
      },
      { requestId },
    );
    audit.organization(r.organization_id);
    audit.detail("amount", r.approved_amount);
    return { status: 200, body: presentCreditRequest(r) };
  },
});

export const denyRoute = defineRoute({
  method: "post",
  path: "/api/v1/credits/requests/:requestId/deny",
  operationId: "denyCreditRequest",
  tags: TAGS,
  summary: "Deny a request; the requester is notified",
  auth: "user",
  params: RequestParams,
  body: DenyBody,
  idempotent: true,
  audit: "credits.request.deny",
  errors: ["conflict"],
  responses: { 200: CreditRequest },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.target("credit_request", params.requestId);
    const r = await denyCreditRequest(deps, principal, params.requestId, { note: body.note });
    audit.organization(r.organization_id);
    return { status: 200, body: presentCreditRequest(r) };
  },
});

export const cancelRoute = defineRoute({
  method: "post",
  path: "/api/v1/credits/requests/:requestId/cancel",
  operationId: "cancelCreditRequest",
  tags: TAGS,
  summary: "Withdraw your pending request",
  auth: "user",
  params: RequestParams,
  idempotent: true,
  audit: "credits.request.cancel",
  errors: ["conflict"],
  responses: { 200: CreditRequest },
  handler: async ({ deps, principal, params, audit }) => {
    audit.target("credit_request", params.requestId);
    const r = await cancelCreditRequest(deps, principal, params.requestId);
    audit.organization(r.organization_id);
    return { status: 200, body: presentCreditRequest(r) };
  },
});

export const listRefillsRoute = defineRoute({
  method: "get",
  path: "/api/v1/credits/refills",
  operationId: "listRefills",
  tags: TAGS,
  summary: "Refill schedules of wallets you may see",
  auth: "user",
  query: ListWalletsQuery.pick({ page: true, size: true }),
  responses: { 200: Paged(Refill) },
  handler: async ({ deps, principal, query }) => ({
    status: 200,
    body: await listRefills(deps, principal, query, presentRefill),
  }),
});

export const createRefillRoute = defineRoute({
  method: "post",
  path: "/api/v1/credits/refills",
  operationId: "createRefill",
  tags: TAGS,
  summary: "Top a wallet up to, or by, an amount every period (paid by a wallet you manage)",
  description:
    "Applied once per period by the worker (UTC periods), also after downtime: each period since the last applied one is applied once, oldest first. A paying wallet short of credits pays what it has.",
  auth: "user",
  body: CreateRefillBody,
  idempotent: true,
  audit: "credits.refill.create",
  errors: ["not_found", "bad_request"],
  responses: { 201: Refill },
  handler: async ({ deps, principal, body, audit }) => {
    const r = await createRefill(deps, principal, {
      walletId: body.wallet_id,
      sourceWalletId: body.source_wallet_id,
      mode: body.mode,
      amount: units(body.amount),
      period: body.period,
      startsAt: body.starts_at ? new Date(body.starts_at) : undefined,
    });
    audit.target("refill", r.id);
    if (r.organization_id) audit.organization(r.organization_id);
    return { status: 201, body: presentRefill(r) };
  },
});

export const getRefillRoute = defineRoute({
  method: "get",
  path: "/api/v1/credits/refills/:refillId",
  operationId: "getRefill",
  tags: TAGS,
  summary: "A refill schedule and its latest applications",
  auth: "user",
  params: RefillParams,
  responses: { 200: RefillDetail },
  handler: async ({ deps, principal, params }) => {
    const { refill, applications } = await historyOf(deps, principal, params.refillId);
    return {
      status: 200,
      body: { ...presentRefill(refill), applications: applications.map(presentRefillApplication) },
    };
  },
});

export const changeRefillRoute = defineRoute({
  method: "patch",
  path: "/api/v1/credits/refills/:refillId",
  operationId: "changeRefill",
  tags: TAGS,
  summary: "Change or pause a refill schedule (the paying wallet's managers)",
  auth: "user",
  params: RefillParams,
  body: ChangeRefillBody,
  idempotent: true,
  audit: "credits.refill.change",
  errors: ["bad_request"],
  responses: { 200: Refill },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.target("refill", params.refillId);
    const r = await changeRefill(deps, principal, params.refillId, {
      mode: body.mode,
      amount: body.amount === undefined ? undefined : units(body.amount),
      period: body.period,
      enabled: body.enabled,
    });
    if (r.organization_id) audit.organization(r.organization_id);
    return { status: 200, body: presentRefill(r) };
  },
});

export const routes: RouteDef[] = [
  listWalletsRoute,
  openWalletRoute,
  getWalletRoute,
  changeWalletRoute,
  walletLedgerRoute,
  walletLedgerExportRoute,
  listAllocationsRoute,
  allocateRoute,
  listRequestsRoute,
  askRoute,
  getRequestRoute,
  approveRoute,
  denyRoute,
  cancelRoute,
  listRefillsRoute,
  createRefillRoute,
  getRefillRoute,
  changeRefillRoute,
];
