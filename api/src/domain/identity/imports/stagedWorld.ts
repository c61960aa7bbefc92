// Rows played in memory on what was read beforehand, each on a staged copy kept only if the row is not
// refused, as a row's transaction would be committed or rolled back. What the kept rows did is gathered as
// the writes that make it (Effects): the real run writes a chunk's in a few statements in one transaction
// (dbWorld.ts), the dry run drops them (dryWorld.ts). Both back ends thus play the same rows the same way.

import type { NewTransaction } from "../../../db/operations/ledger/insertTransactions.ts";
import type { NewWallet } from "../../../db/operations/ledger/insertWallet.ts";
import type { WalletRow } from "../../../db/operations/ledger/types.ts";
import type { MembershipRole } from "../../../db/operations/memberships/types.ts";
import type { MembershipKey } from "../../../db/operations/memberships/upsertMembership.ts";
import type { NewUser } from "../../../db/operations/users/insertUser.ts";
import type { UserRow } from "../../../db/operations/users/types.ts";
import { planTransfer } from "../../credits/ledger.ts";
import { units } from "../../credits/money.ts";
import { newWalletOf, ownerKey } from "../../credits/wallets.ts";
import type { NewNotification } from "../../notifications/notify.ts";
import { newId } from "../ids.ts";
import { type Known, roleKey } from "./known.ts";
import type { RowAnswer, RowWorld } from "./rowRules.ts";

/** What the kept rows did, as the rows to write. */
export interface Effects {
  users: NewUser[];
  memberships: (MembershipKey & { role: MembershipRole })[];
  wallets: NewWallet[];
  transactions: NewTransaction[];
  notifications: NewNotification[];
}

const noEffects = (): Effects => ({ users: [], memberships: [], wallets: [], transactions: [], notifications: [] });

/** A new account's temporary password and its hash (the real run); the dry run makes none. */
export type Credentials = () => { password: string; hash: string };

export class StagedWorld {
  readonly #known: Known;
  /** Wallets by id as the rows above left them: the paying ones (organizations'), and people's that exist. */
  readonly #wallets: Map<string, WalletRow>;
  /** People's wallets by owner (ownerKey), those that exist and those the rows above made. */
  readonly #byOwner: Map<string, string>;
  readonly #credentials: Credentials | null;
  #effects = noEffects();

  constructor(known: Known, wallets: readonly WalletRow[], credentials: Credentials | null) {
    this.#known = known;
    this.#wallets = new Map(wallets.map((w) => [w.id, w]));
    this.#byOwner = new Map(
      wallets.map((w) => [ownerKey({ organizationId: w.organization_id, kind: w.owner_kind, id: w.owner_id }), w.id]),
    );
    this.#credentials = credentials;
  }

  /** What the rows kept since the last call did; the next rows start a new list. */
  takeEffects(): Effects {
    const e = this.#effects;
    this.#effects = noEffects();
    return e;
  }

  /** Runs a row against a staged copy; its changes (and effects) are kept unless it is refused. */
  async row(run: (world: RowWorld) => Promise<RowAnswer>): Promise<RowAnswer> {
    const users = new Map<string, UserRow>();
    const roles = new Map<string, string>();
    const keys = new Set<string>();
    const balances = new Map<string, bigint>();
    const owners = new Map<string, string>();
    const e = noEffects();
    const known = this.#known;
    const balanceOf = (w: WalletRow) => balances.get(w.id) ?? units(w.balance);
    const world: RowWorld = {
      findUser: async (email) => users.get(email) ?? known.users.get(email),
      createUser: async (row) => {
        const made = this.#credentials?.();
        const u: NewUser = {
          id: newId("usr"),
          email: row.email,
          displayName: row.name,
          passwordHash: made?.hash ?? "",
          mustChangePassword: true,
          isSuperAdmin: false,
        };
        const now = new Date(0);
        const user: UserRow = {
          id: u.id,
          email: u.email,
          display_name: u.displayName ?? null,
          password_hash: u.passwordHash,
          must_change_password: u.mustChangePassword,
          is_super_admin: u.isSuperAdmin,
          disabled: false,
          token_version: 0,
          password_changed_at: null,
          last_login_at: null,
          created_at: now,
          updated_at: now,
        };
        users.set(row.email, user);
        e.users.push(u);
        return made ? { user, password: made.password } : { user };
      },
      role: async (u, o, p) => roles.get(roleKey(u, o, p)) ?? known.roles.get(roleKey(u, o, p)),
      setRole: async (u, o, p, role) => {
        roles.set(roleKey(u, o, p), role);
        e.memberships.push({ userId: u, organizationId: o, projectId: p, role: role as MembershipRole });
      },
      userWallet: async (o, u, at) => {
        const key = ownerKey({ organizationId: o, kind: "user", id: u });
        const id = owners.get(key) ?? this.#byOwner.get(key);
        if (id) return id;
        const w = newWalletOf({ organizationId: o, kind: "user", id: u }, at);
        owners.set(key, w.id);
        e.wallets.push(w);
        return w.id;
      },
      transfer: async (t) => {
        if (t.idempotencyKey && (keys.has(t.idempotencyKey) || known.keys.has(t.idempotencyKey)))
          return { replayed: true };
        const from = this.#wallets.get(t.fromWalletId);
        if (!from) throw new Error(`the import knows no paying wallet ${t.fromWalletId}`);
        // The ledger's own decision (and 409 insufficient_credits), on the balance the rows above left.
        const { moved, txn } = planTransfer(
          t,
          { ...from, balance: String(balanceOf(from)) },
          {
            id: t.toWalletId,
            organization_id: t.organizationId ?? null,
          },
        );
        balances.set(from.id, balanceOf(from) - moved);
        const to = this.#wallets.get(t.toWalletId);
        if (to) balances.set(to.id, balanceOf(to) + moved);
        if (t.idempotencyKey) keys.add(t.idempotencyKey);
        if (txn) e.transactions.push(txn);
        return { replayed: false, transaction: txn };
      },
      notify: async (n) => {
        e.notifications.push(n);
      },
    };
    const answer = await run(world);
    if (answer.result.outcome !== "error") {
      for (const [k, v] of users) known.users.set(k, v);
      for (const [k, v] of roles) known.roles.set(k, v);
      for (const k of keys) known.keys.add(k);
      for (const [k, v] of owners) this.#byOwner.set(k, v);
      for (const [id, b] of balances) {
        const w = this.#wallets.get(id) as WalletRow;
        this.#wallets.set(id, { ...w, balance: String(b) });
      }
      for (const k of Object.keys(e) as (keyof Effects)[]) (this.#effects[k] as unknown[]).push(...e[k]);
    }
    return answer;
  }
}
