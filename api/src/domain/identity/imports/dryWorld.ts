// The dry run's back end: nothing is written but the rows' records. The rows are played out in memory on
// what was read up front (known.ts), the organizations' wallets drawn row by row as the import will draw
// them, so a row sees what the rows above it did. Playing the import and rolling it back cost more than the
// import itself (a transaction, savepoint, password, hash, ledger movements and notifications per row,
// then the rollback): bench/src/user-import.ts.
import type { Knex } from "knex";
import { findWalletsByOwners } from "../../../db/operations/ledger/findWallets.ts";
import type { WalletRow } from "../../../db/operations/ledger/types.ts";
import { type ImportRowRecord, insertImportRows } from "../../../db/operations/userImports/jobs.ts";
import type { UserRow } from "../../../db/operations/users/types.ts";
import { insufficient, spendable } from "../../credits/ledger.ts";
import { units } from "../../credits/money.ts";
import { welcomeAmount } from "../../credits/welcome.ts";
import { newId } from "../ids.ts";
import { type Known, type Org, roleKey } from "./known.ts";
import { type ImportRun, type RowAnswer, type RowWorld, runRow, type TodoRow } from "./rowRules.ts";

/**
 * The dry run's world: what was read up front (accounts, memberships, ledger keys, the paying wallets),
 * changed row by row in memory. A row's changes are kept only if it is not refused, as its transaction
 * would be committed or rolled back.
 */
export class DryWorld {
  readonly #db: Knex;
  readonly #importId: string;
  readonly #run: ImportRun;
  readonly #known: Known;
  /** Paying wallets (the organizations'), their balance as the rows above left it. */
  readonly #payers: Map<string, WalletRow>;

  private constructor(db: Knex, importId: string, run: ImportRun, payers: Map<string, WalletRow>) {
    this.#db = db;
    this.#importId = importId;
    this.#run = run;
    this.#known = run.known;
    this.#payers = payers;
  }

  /** Reads the organizations' wallets and welcome amounts (making none) into `run.perOrg`. */
  static async open(db: Knex, importId: string, run: ImportRun, organizations: Org[]): Promise<DryWorld> {
    const payers = new Map<string, WalletRow>();
    for (const org of organizations) {
      const wallet = (await findWalletsByOwners(db, [{ organizationId: org.id, kind: "organization", id: org.id }]))[0];
      // A wallet not made yet pays nothing: as the new one the import would make.
      const w =
        wallet ?? ({ id: `dry-run:${org.id}`, balance: "0", overdraft: "0", allow_negative: false } as WalletRow);
      payers.set(w.id, w);
      run.perOrg.set(org.id, { walletId: w.id, welcome: await welcomeAmount(db, org.id) });
    }
    return new DryWorld(db, importId, run, payers);
  }

  /** Plays a chunk of rows and records them, in one insert. */
  async chunk(rows: TodoRow[]): Promise<void> {
    const records: ImportRowRecord[] = [];
    for (const { c, idx } of rows) {
      const a = await runRow(this.#run, c, (apply) => this.#row(apply));
      records.push({ idx, outcome: a.result.outcome, result: a.result });
    }
    await insertImportRows(this.#db, this.#importId, records);
  }

  /** Runs a row against a staged copy; its changes are kept unless it is refused. */
  async #row(run: (world: RowWorld) => Promise<RowAnswer>): Promise<RowAnswer> {
    const users = new Map<string, UserRow>();
    const roles = new Map<string, string>();
    const keys = new Set<string>();
    const balances = new Map<string, bigint>();
    const known = this.#known;
    const payers = this.#payers;
    const world: RowWorld = {
      findUser: async (email) => users.get(email) ?? known.users.get(email),
      createUser: async (row) => {
        const now = new Date(0);
        const user: UserRow = {
          id: newId("usr"),
          email: row.email,
          display_name: row.name,
          password_hash: "",
          must_change_password: true,
          is_super_admin: false,
          disabled: false,
          token_version: 0,
          password_changed_at: null,
          last_login_at: null,
          created_at: now,
          updated_at: now,
        };
        users.set(row.email, user);
        return { user };
      },
      role: async (u, o, p) => roles.get(roleKey(u, o, p)) ?? known.roles.get(roleKey(u, o, p)),
      setRole: async (u, o, p, role) => {
        roles.set(roleKey(u, o, p), role);
      },
      userWallet: async (o, u) => `dry-run:${o}:${u}`,
      transfer: async (t) => {
        if (t.idempotencyKey && (keys.has(t.idempotencyKey) || known.keys.has(t.idempotencyKey)))
          return { replayed: true };
        const from = payers.get(t.fromWalletId);
        if (!from) throw new Error(`the dry run knows no paying wallet ${t.fromWalletId}`);
        const now = { ...from, balance: String(balances.get(from.id) ?? units(from.balance)) };
        if (spendable(now) < t.amount) throw insufficient(now, t.amount);
        balances.set(from.id, units(now.balance) - t.amount);
        if (t.idempotencyKey) keys.add(t.idempotencyKey);
        return { replayed: false };
      },
      notify: async () => {},
    };
    const answer = await run(world);
    if (answer.result.outcome !== "error") {
      for (const [k, v] of users) known.users.set(k, v);
      for (const [k, v] of roles) known.roles.set(k, v);
      for (const k of keys) known.keys.add(k);
      for (const [id, b] of balances) {
        const w = payers.get(id) as WalletRow;
        payers.set(id, { ...w, balance: String(b) });
      }
    }
    return answer;
  }
}
