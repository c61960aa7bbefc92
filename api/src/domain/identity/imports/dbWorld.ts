// The real run's back end: each row applied in a transaction of its own, with its record. A row is all or
// nothing — its account, memberships, initial credits, notification and its record in the job — and one
// bad row does not stop the others. With the record committed in the row's transaction, a job resumed after
// a crash skips exactly the rows done.
import type { Knex } from "knex";
import { findMembership } from "../../../db/operations/memberships/findMembership.ts";
import { upsertMembership } from "../../../db/operations/memberships/upsertMembership.ts";
import { type ImportRowRecord, insertImportRows } from "../../../db/operations/userImports/jobs.ts";
import { findUserByEmail } from "../../../db/operations/users/findUserByEmail.ts";
import { insertUser } from "../../../db/operations/users/insertUser.ts";
import { sqlState, UNIQUE_VIOLATION } from "../../../db/sqlstate.ts";
import type { Deps } from "../../../deps.ts";
import { transfer } from "../../credits/ledger.ts";
import { ensureWallet } from "../../credits/wallets.ts";
import { welcomeAmount } from "../../credits/welcome.ts";
import { notify } from "../../notifications/notify.ts";
import { newId } from "../ids.ts";
import { generatePassword, type PasswordHasher } from "../password.ts";
import type { Org } from "./known.ts";
import { type ImportRun, type RowAnswer, RowRefused, type RowWorld, runRow, type TodoRow } from "./rowRules.ts";

/** What running rows needs: the worker has no API deps, only these. */
export type ImportRunDeps = Pick<Deps, "db" | "clock"> & { auth: { hasher: Pick<PasswordHasher, "hashGenerated"> } };

/** What must stand or fall with a row in its transaction: its record, with its sealed password. */
export type RecordRow = (tx: Knex.Transaction, idx: number, a: RowAnswer) => Promise<void>;

export class DbWorld {
  readonly #deps: ImportRunDeps;
  readonly #importId: string;
  readonly #run: ImportRun;
  readonly #record: RecordRow;

  private constructor(deps: ImportRunDeps, importId: string, run: ImportRun, record: RecordRow) {
    this.#deps = deps;
    this.#importId = importId;
    this.#run = run;
    this.#record = record;
  }

  /**
   * The organizations' wallets and welcome amounts are read (the wallets made) once, before any row: a
   * row rolled back must not take a wallet other rows were told about with it.
   */
  static async open(
    deps: ImportRunDeps,
    importId: string,
    run: ImportRun,
    organizations: Org[],
    record: RecordRow,
  ): Promise<DbWorld> {
    for (const org of organizations) {
      const { wallet } = await ensureWallet(
        deps.db,
        { organizationId: org.id, kind: "organization", id: org.id },
        run.at,
      );
      run.perOrg.set(org.id, { walletId: wallet.id, welcome: await welcomeAmount(deps.db, org.id) });
    }
    return new DbWorld(deps, importId, run, record);
  }

  /**
   * Runs a chunk of rows. A row that did something commits its record (and its sealed password) with it;
   * a row that did nothing (refused, unchanged) is recorded with others of its chunk: lost in a crash, it
   * is only done again on resume, as harmlessly.
   */
  async chunk(rows: TodoRow[]): Promise<void> {
    const loose: ImportRowRecord[] = [];
    for (const { c, idx } of rows) {
      const a = await runRow(this.#run, c, (apply) =>
        rowTransaction(
          this.#deps.db,
          (tx) => apply(dbWorld(this.#deps, tx)),
          async (tx, a) => {
            await this.#record(tx, idx, a);
            a.recorded = true;
          },
        ),
      );
      if (!a.recorded) loose.push({ idx, outcome: a.result.outcome, result: a.result });
    }
    await insertImportRows(this.#deps.db, this.#importId, loose);
  }
}

const ROLLBACK = new Error("roll back");

/**
 * A failed row leaves nothing behind: it runs in its own transaction. `commit` writes, in that
 * transaction, what must stand or fall with the row (its record).
 */
async function rowTransaction(
  db: Knex,
  run: (tx: Knex.Transaction) => Promise<RowAnswer>,
  commit: (tx: Knex.Transaction, a: RowAnswer) => Promise<void>,
): Promise<RowAnswer> {
  let answer: RowAnswer | undefined;
  await db
    .transaction(async (tx) => {
      answer = await run(tx);
      if (answer.result.outcome === "error") throw ROLLBACK;
      await commit(tx, answer);
    })
    .catch((err) => {
      if (err !== ROLLBACK) throw err;
    });
  return answer as RowAnswer;
}

function dbWorld(deps: ImportRunDeps, tx: Knex.Transaction): RowWorld {
  return {
    findUser: (email) => findUserByEmail(tx, email),
    createUser: async (row) => {
      const password = generatePassword();
      try {
        const user = await insertUser(tx, {
          id: newId("usr"),
          email: row.email,
          displayName: row.name,
          passwordHash: deps.auth.hasher.hashGenerated(password),
          mustChangePassword: true,
          isSuperAdmin: false,
        });
        return { user, password };
      } catch (err) {
        if (sqlState(err) === UNIQUE_VIOLATION)
          throw new RowRefused("conflict", "the account was created by someone else meanwhile; run the import again");
        throw err;
      }
    },
    role: async (userId, organizationId, projectId) =>
      (await findMembership(tx, { userId, organizationId, projectId }))?.role,
    setRole: async (userId, organizationId, projectId, role) => {
      await upsertMembership(tx, {
        userId,
        organizationId,
        projectId,
        role: role as Parameters<typeof upsertMembership>[1]["role"],
      });
    },
    userWallet: async (organizationId, userId, at) =>
      (await ensureWallet(tx, { organizationId, kind: "user", id: userId }, at)).wallet.id,
    transfer: (t) => transfer(tx, t),
    notify: async (n) => {
      await notify(tx, n);
    },
  };
}
