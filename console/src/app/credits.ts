// What the header and the credits pages share: who the person is for the credit rules, the event that
// tells the header's balance to reload after a movement, and the header's wallet.
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
