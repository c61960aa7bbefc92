// The dry run's back end: nothing is written but the rows' records. The rows are played out in memory
// (stagedWorld.ts) on what was read up front (known.ts), the organizations' wallets drawn row by row as the
// import will draw them, so a row sees what the rows above it did; what they would write is dropped.
// Playing the import and rolling it back cost more than the import itself (a transaction, savepoint,
// password, hash, ledger movements and notifications per row, then the rollback): bench/src/user-import.ts.
import type { Knex } from "knex";
import { findWalletsByOwners } from "../../../db/operations/ledger/findWallets.ts";
import type { WalletRow } from "../../../db/operations/ledger/types.ts";
import { type ImportRowRecord, insertImportRows } from "../../../db/operations/userImports/jobs.ts";
import { welcomeAmount } from "../../credits/welcome.ts";
import { type Known, type Org, whatExists } from "./known.ts";
import { type ImportRun, runRow, type TodoRow } from "./rowRules.ts";
import { StagedWorld } from "./stagedWorld.ts";

export class DryWorld {
  readonly #db: Knex;
  readonly #importId: string;
  readonly #run: ImportRun;
  readonly #known: Known;
  readonly #staged: StagedWorld;

  private constructor(db: Knex, importId: string, run: ImportRun, known: Known, payers: WalletRow[]) {
    this.#db = db;
    this.#importId = importId;
    this.#run = run;
    this.#known = known;
    this.#staged = new StagedWorld(known, payers, null);
  }

  /**
   * Reads what the rows need, once: the people's accounts, memberships and ledger keys, and the
   * organizations' wallets and welcome amounts (making none) into `run.perOrg`.
   */
  static async open(
    db: Knex,
    importId: string,
    run: ImportRun,
    organizations: Org[],
    todo: TodoRow[],
  ): Promise<DryWorld> {
    const known = await whatExists(
      db,
      todo.map((x) => x.c),
      run.orgs,
    );
    const payers: WalletRow[] = [];
    for (const org of organizations) {
      const wallet = (await findWalletsByOwners(db, [{ organizationId: org.id, kind: "organization", id: org.id }]))[0];
      // A wallet not made yet pays nothing: as the new one the import would make.
      const w =
        wallet ??
        ({
          id: `dry-run:${org.id}`,
          organization_id: org.id,
          owner_kind: "organization",
          owner_id: org.id,
          balance: "0",
          overdraft: "0",
          allow_negative: false,
        } as WalletRow);
      payers.push(w);
      run.perOrg.set(org.id, { walletId: w.id, welcome: await welcomeAmount(db, org.id) });
    }
    return new DryWorld(db, importId, run, known, payers);
  }

  /** Plays a chunk of rows and records them, in one insert. */
  async chunk(rows: TodoRow[]): Promise<void> {
    const records: ImportRowRecord[] = [];
    for (const { c, idx } of rows) {
      const a = await runRow(this.#run, this.#known, c, (apply) => this.#staged.row(apply));
      records.push({ idx, outcome: a.result.outcome, result: a.result });
    }
    this.#staged.takeEffects();
    await insertImportRows(this.#db, this.#importId, records);
  }
}
