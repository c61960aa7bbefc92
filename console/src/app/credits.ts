// What the header and the credits pages share: who the person is for the credit rules, the event that
// tells the header's balance to reload after a movement, and the header's wallet.
import { type BodyOf, buildUrl, newIdempotencyKey, type QueryOf } from "../api/client.ts";
import { OPERATIONS } from "../api/openapi.gen.ts";
import { type HeaderWallet, type MeForCredits, pickHeaderWallet } from "../data/wallets.ts";
import { api, auth } from "./context.ts";

export const CREDITS_CHANGED = "berth-credits-changed";

/** Credits moved (allocation, approval, request): the header's balance reloads. */
export function announceCreditsChanged(): void {
  window.dispatchEvent(new Event(CREDITS_CHANGED));
}

export function meForCredits(): MeForCredits {
  return { userId: auth.userId, isSuperAdmin: auth.isSuperAdmin, memberships: auth.me?.memberships ?? [] };
}

/**
 * The header's wallet in at most two requests: the person's own wallets, then, when they have none, the
 * first page of everything they see (organization and project wallets sort first).
 */
export async function loadHeaderWallet(signal?: AbortSignal): Promise<HeaderWallet | undefined> {
  const me = meForCredits();
  if (!me.userId) return undefined;
  const query = { owner_kind: "user" as const, owner_id: me.userId, size: 100 };
  const people = await api.call("listWallets", { query }, { signal });
  const own = pickHeaderWallet(people.data, me);
  if (own?.own) return own;
  const first = await api.call("listWallets", { query: { size: 50 } }, { signal });
  return pickHeaderWallet(first.data, me);
}

export function loadWallets(query: QueryOf<"listWallets">, signal?: AbortSignal) {
  return api.call("listWallets", { query }, { signal });
}

/** An organization's wallets (its own, its projects' and its members'). */
export function loadOrganizationWallets(organization: string, signal?: AbortSignal) {
  return loadWallets({ organization, size: 100 }, signal);
}

export function loadSystemWallets(signal?: AbortSignal) {
  return loadWallets({ owner_kind: "system", size: 10 }, signal);
}

export function loadWallet(walletId: string, signal?: AbortSignal) {
  return api.call("getWallet", { params: { walletId } }, { signal });
}

export function loadWalletLedger(walletId: string, query: QueryOf<"getWalletLedger">, signal?: AbortSignal) {
  return api.call("getWalletLedger", { params: { walletId }, query }, { signal });
}

export function openWallet(body: BodyOf<"openWallet">) {
  return api.call("openWallet", { body });
}

export function loadAllocations(page: number, signal?: AbortSignal) {
  return api.call("listAllocations", { query: { page, size: 20 } }, { signal });
}

export function allocateCredits(body: BodyOf<"allocateCredits">, idempotencyKey: string) {
  return api.call("allocateCredits", { body }, { idempotencyKey });
}

export function loadCreditRequests(query: QueryOf<"listCreditRequests">, signal?: AbortSignal) {
  return api.call("listCreditRequests", { query }, { signal });
}

export function requestCredits(body: BodyOf<"requestCredits">, idempotencyKey: string) {
  return api.call("requestCredits", { body }, { idempotencyKey });
}

export function approveCreditRequest(requestId: string, body: BodyOf<"approveCreditRequest">, idempotencyKey: string) {
  return api.call("approveCreditRequest", { params: { requestId }, body }, { idempotencyKey });
}

export function denyCreditRequest(requestId: string, body: BodyOf<"denyCreditRequest">, idempotencyKey: string) {
  return api.call("denyCreditRequest", { params: { requestId }, body }, { idempotencyKey });
}

export function cancelCreditRequest(requestId: string) {
  return api.call("cancelCreditRequest", { params: { requestId } }, { idempotencyKey: newIdempotencyKey() });
}

export function loadBudgets(signal?: AbortSignal) {
  return api.call("listBudgets", { query: { size: 100 } }, { signal });
}

export function setBudget(organizationId: string, body: BodyOf<"setBudget">) {
  return api.call("setBudget", { params: { organizationId }, body });
}

export function deleteBudget(organizationId: string) {
  return api.call("deleteBudget", { params: { organizationId } });
}

export function loadRefills(signal?: AbortSignal) {
  return api.call("listRefills", { query: { size: 100 } }, { signal });
}

export function createRefill(body: BodyOf<"createRefill">, idempotencyKey: string) {
  return api.call("createRefill", { body }, { idempotencyKey });
}

export function setRefillEnabled(refillId: string, enabled: boolean) {
  return api.call("changeRefill", { params: { refillId }, body: { enabled } });
}

/** A wallet's ledger as CSV, with the filters the page shows. */
export function exportWalletLedger(walletId: string, query: Record<string, unknown>) {
  return api.fetchRaw(buildUrl(OPERATIONS.exportWalletLedger.path, { walletId }, query), {
    headers: { Accept: "text/csv" },
  });
}
