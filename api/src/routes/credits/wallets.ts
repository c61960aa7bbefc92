// /api/v1/credits/wallets: wallets, their ledgers and the ledger's CSV export (docs/dev/billing.md).
import { z } from "zod";
import { Paged } from "../../db/paging.ts";
import { exportWalletLedger } from "../../domain/credits/exportLedger.ts";
import { changeWallet, getWallet, listWallets, openWallet, walletLedger } from "../../domain/credits/manageWallets.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { CSV_HEADER, ledgerCsvRow, presentLedgerLine, presentWallet } from "./presenter.ts";
import {
  ChangeWalletBody,
  LedgerExportQuery,
  LedgerLine,
  LedgerQuery,
  ListWalletsQuery,
  OpenWalletBody,
  Wallet,
  WalletParams,
} from "./schemas.ts";
import { TAGS, units } from "./shared.ts";

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

export const routes: RouteDef[] = [
  listWalletsRoute,
  openWalletRoute,
  getWalletRoute,
  changeWalletRoute,
  walletLedgerRoute,
  walletLedgerExportRoute,
];
