// What the header needs of wallets, kept apart from the credits pages' helpers (data/credits.ts) so the
// entry bundle carries only this: which wallet to show, and how to name its owner's kind.
import type { MembershipOfUser, Wallet } from "../api/openapi.gen.ts";

export const OWNER_KIND_LABEL: Record<Wallet["owner"]["kind"], string> = {
  user: "Person",
  project: "Project",
  organization: "Organization",
  system: "Platform",
};

export interface MeForCredits {
  userId: string | undefined;
  isSuperAdmin: boolean;
  memberships: readonly MembershipOfUser[];
}

/** Is the amount negative (a wallet in overdraft shows in red)? */
export function isNegative(minor: string): boolean {
  return BigInt(minor) < 0n;
}

export interface HeaderWallet {
  wallet: Wallet;
  /** The person's own wallet (else the most relevant other one they see). */
  own: boolean;
}

/**
 * The wallet the header shows: the person's own wallet in their first organization (then in any other),
 * else a project's wallet of theirs (their sessions draw from it next), else their organization's (an
 * admin's pool), else the platform's, else any organization's (super_admins). Undefined when they see none.
 */
export function pickHeaderWallet(wallets: readonly Wallet[], me: MeForCredits): HeaderWallet | undefined {
  const orgOrder = [...new Set(me.memberships.map((m) => m.organization_id))];
  const orgRank = (w: Wallet) => {
    const i = orgOrder.indexOf(w.organization_id ?? "");
    return i < 0 ? orgOrder.length : i;
  };
  const myProjects = new Set(me.memberships.flatMap((m) => (m.project_id ? [m.project_id] : [])));
  const rank = (w: Wallet): number => {
    if (w.owner.kind === "user" && w.owner.id === me.userId) return 0;
    if (w.owner.kind === "project" && myProjects.has(w.owner.id)) return 1;
    if (w.owner.kind === "organization" && orgOrder.includes(w.owner.id)) return 2;
    // A super_admin outside every organization: the platform's wallet (what they issue) before any one
    // organization's.
    if (w.owner.kind === "system") return 3;
    if (w.owner.kind === "organization") return 4;
    return -1;
  };
  const best = wallets
    .filter((w) => rank(w) >= 0)
    .sort((a, b) => rank(a) - rank(b) || orgRank(a) - orgRank(b) || a.id.localeCompare(b.id))[0];
  return best ? { wallet: best, own: rank(best) === 0 } : undefined;
}
