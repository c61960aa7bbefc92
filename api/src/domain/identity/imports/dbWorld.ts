// The real run's back end: a chunk of rows at a time, in one transaction. Rows that what was read up front
// shows refused or already as they say are only recorded (a file run again costs no transaction). The
// chunk reads what its other rows need again, under its transaction, in one query per kind (accounts, memberships, ledger keys), locks the wallets that may move in one
// statement (id order, as every ledger writer locks), plays the rows in memory on that (stagedWorld.ts:
// the ledger's own decision per transfer, on the balances the rows above left) and writes what the kept
// rows did in one statement per kind, with every row's record. A row is still all or nothing: a refused
// row leaves nothing in the chunk's writes. When the writes fail (someone made the account, the wallet or
// the credit meanwhile), the chunk rolls back whole and its rows run again one by one, so one row's
// conflict never takes the others with it. Records commit with what their rows did, so a job resumed
// after a crash skips exactly the rows done. 150 new people cost 52 statements where a transaction per row
// cost 2,585 (api/src/worker/userImports.pg.test.ts bounds them; bench/src/user-import.ts times them).
import type { Knex } from "knex";
import { insertTransactions } from "../../../db/operations/ledger/insertTransactions.ts";
import { insertWallets } from "../../../db/operations/ledger/insertWallet.ts";
import { lockWalletsOfOwners } from "../../../db/operations/ledger/lockWallets.ts";
import { upsertMemberships } from "../../../db/operations/memberships/upsertMembership.ts";
import { type ImportRowRecord, insertImportRows } from "../../../db/operations/userImports/jobs.ts";
import { insertUsers } from "../../../db/operations/users/insertUser.ts";
import { sqlState, UNIQUE_VIOLATION } from "../../../db/sqlstate.ts";
import type { Deps } from "../../../deps.ts";
import { ensureWallet } from "../../credits/wallets.ts";
import { welcomeAmount } from "../../credits/welcome.ts";
import { notify } from "../../notifications/notify.ts";
import { generatePassword, type PasswordHasher } from "../password.ts";
import { type Known, type Org, orgOf, whatExists } from "./known.ts";
import { type ImportRun, type RowAnswer, refusedRow, runRow, settledRow, type TodoRow } from "./rowRules.ts";
import { type Credentials, StagedWorld } from "./stagedWorld.ts";

/** What running rows needs: the worker has no API deps, only these. */
export type ImportRunDeps = Pick<Deps, "db" | "clock"> & { auth: { hasher: Pick<PasswordHasher, "hashGenerated"> } };

/** Seals the temporary password a row's answer carries for its record (null: none). */
export type SealRow = (a: RowAnswer) => string | null;

/** The chunk's writes found the database changed since its reads: roll back, run the rows one by one. */
class ChangedMeanwhile extends Error {
  override name = "ChangedMeanwhile";
}

export class DbWorld {
  readonly #deps: ImportRunDeps;
  readonly #importId: string;
  readonly #run: ImportRun;
  readonly #seal: SealRow;
  readonly #credentials: Credentials;
  /** What was read up front: rows it shows as already done (or refused) need no transaction. */
  readonly #known: Known;

  private constructor(deps: ImportRunDeps, importId: string, run: ImportRun, seal: SealRow, known: Known) {
    this.#deps = deps;
    this.#importId = importId;
    this.#run = run;
    this.#seal = seal;
    this.#known = known;
    this.#credentials = () => {
      const password = generatePassword();
      return { password, hash: deps.auth.hasher.hashGenerated(password) };
    };
  }

  /**
   * The organizations' wallets and welcome amounts are read (the wallets made) once, before any row: a
   * chunk rolled back must not take a wallet other chunks were told about with it.
   */
  static async open(
    deps: ImportRunDeps,
    importId: string,
    run: ImportRun,
    organizations: Org[],
    todo: TodoRow[],
    seal: SealRow,
  ): Promise<DbWorld> {
    for (const org of organizations) {
      const { wallet } = await ensureWallet(
        deps.db,
        { organizationId: org.id, kind: "organization", id: org.id },
        run.at,
      );
      run.perOrg.set(org.id, { walletId: wallet.id, welcome: await welcomeAmount(deps.db, org.id) });
    }
    const known = await whatExists(
      deps.db,
      todo.map((x) => x.c),
      run.orgs,
    );
    return new DbWorld(deps, importId, run, seal, known);
  }

  /**
   * Runs a chunk of rows in one transaction; on a conflict, each of its rows in one of its own. Rows that
   * what was read up front shows refused or already as they say are only recorded (a file run again).
   */
  async chunk(rows: TodoRow[]): Promise<void> {
    const settled: ImportRowRecord[] = [];
    const work: TodoRow[] = [];
    for (const r of rows) {
      const a = settledRow(this.#run, this.#known, r.c);
      if (a) settled.push({ idx: r.idx, outcome: a.result.outcome, result: a.result });
      else work.push(r);
    }
    if (work.length === 0) return insertImportRows(this.#deps.db, this.#importId, settled);
    try {
      await this.#deps.db.transaction((tx) => this.#apply(tx, work, settled));
    } catch (err) {
      if (rows.length > 1) {
        for (const r of rows) await this.chunk([r]);
        return;
      }
      if (!(err instanceof ChangedMeanwhile) && sqlState(err) !== UNIQUE_VIOLATION) throw err;
      const [{ c, idx }] = rows as [TodoRow];
      const a = refusedRow(
        c,
        "conflict",
        "the account, its wallet or its credits were changed by someone else meanwhile; run the import again",
      );
      await insertImportRows(this.#deps.db, this.#importId, [{ idx, outcome: a.result.outcome, result: a.result }]);
    }
  }

  async #apply(tx: Knex.Transaction, rows: TodoRow[], settled: ImportRowRecord[]): Promise<void> {
    const run = this.#run;
    const known = await whatExists(
      tx,
      rows.map((r) => r.c),
      run.orgs,
    );
    // The wallets that may move: the paying organizations' and their existing people's.
    const owners = new Map<string, { organizationId: string; kind: string; id: string }>();
    for (const { c } of rows) {
      const org = c.ok && c.row.organization ? orgOf(run.orgs, c.row.organization) : undefined;
      if (!c.ok || !org || !run.perOrg.has(org.id)) continue;
      owners.set(org.id, { organizationId: org.id, kind: "organization", id: org.id });
      const user = known.users.get(c.row.email);
      if (user) owners.set(`${org.id}/${user.id}`, { organizationId: org.id, kind: "user", id: user.id });
    }
    const staged = new StagedWorld(known, await lockWalletsOfOwners(tx, [...owners.values()]), this.#credentials);
    const records = [...settled];
    for (const { c, idx } of rows) {
      const a = await runRow(run, known, c, (apply) => staged.row(apply));
      records.push({ idx, outcome: a.result.outcome, result: a.result, sealed_password: this.#seal(a) });
    }
    const e = staged.takeEffects();
    await insertUsers(tx, e.users);
    await upsertMemberships(tx, e.memberships);
    if ((await insertWallets(tx, e.wallets)).length !== e.wallets.length) throw new ChangedMeanwhile();
    if ((await insertTransactions(tx, e.transactions)).duplicates.length > 0) throw new ChangedMeanwhile();
    await notify(tx, e.notifications);
    await insertImportRows(tx, this.#importId, records);
  }
}
