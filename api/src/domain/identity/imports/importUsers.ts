// Bulk user import (docs/dev/identity.md, "Bulk import"). A file is taken at once (acceptImport: the
// whole-file checks) and its rows are run by the worker as a job (runImport, worker/userImports.ts). One
// function (applyRow) serves the dry run and the real run, so what the dry run shows is what the real run does:
// - Each row is applied in a transaction of its own. A row is all or nothing — its account, memberships,
//   initial credits, notification and its record in the job — and one bad row does not stop the 9,999 good
//   ones. The dry run writes nothing: it plays the rows on a copy in memory of what was read up front
//   (DryWorld), so it sees earlier rows' effects (an organization's balance drawn by the rows above) as the
//   real run will, with no transaction, password or hash per row.
// - Idempotent per email: a row whose account, memberships and initial credits are already as it says
//   is `unchanged`; initial credits are paid once per person and organization (ledger key
//   `import:initial:<organization>:<user>`), the welcome credit once ever (credits/welcome.ts). With the
//   record committed in the row's transaction, a job resumed after a crash skips exactly the rows done.
// - New accounts get a generated temporary password (must change it at first sign-in, as accounts made
//   by an administrator do), kept sealed in the row's record until the importer fetches them once
//   (takeTemporaryPasswords) or the retention erases them; the person's bell gets a welcome notification.
import type { Knex } from "knex";
import { findWalletsByOwners } from "../../../db/operations/ledger/findWallets.ts";
import type { WalletRow } from "../../../db/operations/ledger/types.ts";
import { findMembership } from "../../../db/operations/memberships/findMembership.ts";
import { upsertMembership } from "../../../db/operations/memberships/upsertMembership.ts";
import {
  countImportRows,
  deleteImportRows,
  doneRowIndexes,
  findImportJob,
  type ImportJobRow,
  type ImportRowRecord,
  importRowResults,
  insertImportJob,
  insertImportRows,
  takeSealedPasswords,
} from "../../../db/operations/userImports/jobs.ts";
import { findUserByEmail } from "../../../db/operations/users/findUserByEmail.ts";
import { insertUser } from "../../../db/operations/users/insertUser.ts";
import type { UserRow } from "../../../db/operations/users/types.ts";
import { sqlState, UNIQUE_VIOLATION } from "../../../db/sqlstate.ts";
import type { Deps } from "../../../deps.ts";
import { DomainError, Forbidden, NotFound } from "../../../errors.ts";
import { insufficient, spendable, type Transfer, transfer } from "../../credits/ledger.ts";
import { formatCredits, units } from "../../credits/money.ts";
import { ensureWallet } from "../../credits/wallets.ts";
import { payWelcome, welcomeAmount, welcomeKey } from "../../credits/welcome.ts";
import { type NewNotification, notify } from "../../notifications/notify.ts";
import { newId } from "../ids.ts";
import { loadPrincipal } from "../loadPrincipal.ts";
import { generatePassword, type PasswordHasher } from "../password.ts";
import type { Principal } from "../principal.ts";
import { canSeeOrganization, scopeOf } from "../scope.ts";
import { parseCsv } from "./csv.ts";
import { type CheckedRow, checkRows, type ImportRow } from "./rows.ts";

/**
 * How long an ended import holds its sealed temporary passwords for the importer to fetch; then the worker
 * erases them (worker/userImports.ts). A day: time to come back to a long import, not a store of secrets.
 */
export const PASSWORD_RETENTION_MS = 24 * 3_600_000;

/** Bounds of one file: 10,000 rows is the issue's target; 4 MiB holds them with long names. */
export const IMPORT_LIMITS = { maxBytes: 4 * 1024 * 1024, maxRows: 10_000 } as const;

export type Outcome = "create" | "update" | "unchanged" | "error";

export interface RowResult {
  line: number;
  email: string;
  name: string;
  organization: string;
  project: string;
  role: string;
  initial_credits: string;
  outcome: Outcome;
  code: string | null;
  message: string;
  user_id: string | null;
  organization_id: string | null;
  project_id: string | null;
  welcome_credit: "given" | "unpaid" | null;
}

/** What running rows needs: the worker has no API deps, only these. */
export type ImportRunDeps = Pick<Deps, "db" | "clock"> & { auth: { hasher: Pick<PasswordHasher, "hashGenerated"> } };
type D = ImportRunDeps;

interface Org {
  id: string;
  slug: string;
  name: string;
}
interface Project {
  id: string;
  name: string;
  organization_id: string;
}

interface OrgContext {
  walletId: string;
  welcome: bigint;
}

/** What the file's people already have: their accounts, memberships and the import's ledger keys. */
interface Known {
  users: Map<string, UserRow>;
  /** `<user>/<organization>/<project or "">` → role */
  roles: Map<string, string>;
  keys: Set<string>;
}

const roleKey = (userId: string, organizationId: string, projectId: string | null) =>
  `${userId}/${organizationId}/${projectId ?? ""}`;
const initialKey = (organizationId: string, userId: string) => `import:initial:${organizationId}:${userId}`;

/**
 * A few queries for the whole file (in chunks), so that a row already as it says costs nothing more, and
 * so that the dry run has all it needs to play the rows out without reading again (DryWorld).
 */
async function whatExists(db: Knex, checked: CheckedRow[], orgs: Map<string, Org>): Promise<Known> {
  const rows = checked.flatMap((c) => (c.ok ? [c.row] : []));
  const known: Known = { users: new Map(), roles: new Map(), keys: new Set() };
  for (let i = 0; i < rows.length; i += 1000) {
    const chunk = rows.slice(i, i + 1000);
    const users = (await db("users").whereIn(
      "email",
      chunk.map((r) => r.email),
    )) as UserRow[];
    for (const u of users) known.users.set(u.email, u);
    const ids = users.map((u) => u.id);
    if (ids.length === 0) continue;
    const ms = await db("memberships")
      .whereIn("user_id", ids)
      .select("user_id", "organization_id", "project_id", "role");
    for (const m of ms) known.roles.set(roleKey(m.user_id, m.organization_id, m.project_id), m.role);
    // The keys that make initial and welcome credits once, for each existing person and the row's organization.
    const wanted = chunk.flatMap((r) => {
      const u = known.users.get(r.email);
      const org =
        r.organization === null ? undefined : (orgs.get(r.organization) ?? orgs.get(r.organization.toLowerCase()));
      return u && org ? [initialKey(org.id, u.id), welcomeKey(org.id, u.id)] : [];
    });
    if (wanted.length === 0) continue;
    const keys = await db("ledger_transactions").whereIn("idempotency_key", wanted).pluck("idempotency_key");
    for (const k of keys) known.keys.add(k);
  }
  return known;
}

/**
 * The answer for a row whose account, memberships and initial credits are already as it says, from what
 * was read up front; undefined when the row has something to do (then it is applied in its transaction,
 * which reads again under its own locks).
 */
function unchanged(row: ImportRow, org: Org | null, project: Project | null, known: Known): ApplyResult | undefined {
  const user = known.users.get(row.email);
  if (!user) return undefined;
  const notes: string[] = [];
  if (row.name !== null && row.name !== user.display_name) notes.push("the account exists; its name is left as it is");
  if (org) {
    const orgRole = known.roles.get(roleKey(user.id, org.id, null));
    if (orgRole === undefined || (project === null && orgRole !== row.role)) return undefined;
    if (project && known.roles.get(roleKey(user.id, org.id, project.id)) !== row.role) return undefined;
    if (row.initialCredits > 0n) {
      if (!known.keys.has(initialKey(org.id, user.id))) return undefined;
      notes.push("initial credits were paid by an earlier import; not again");
    }
  }
  return { outcome: "unchanged", userId: user.id, notes, welcome: null };
}

interface ApplyResult {
  outcome: Outcome;
  userId: string;
  password?: string;
  notes: string[];
  welcome: "given" | "unpaid" | null;
}

/** A row's refusal found while resolving or applying it: the row rolls back and reports the code. */
class RowRefused extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

export function checkImportFile(csv: string): CheckedRow[] {
  const bytes = Buffer.byteLength(csv, "utf8");
  if (bytes > IMPORT_LIMITS.maxBytes)
    throw new DomainError(
      "import_file_too_large",
      `the file is ${bytes} bytes; the bound is ${IMPORT_LIMITS.maxBytes}`,
      {
        limit_bytes: IMPORT_LIMITS.maxBytes,
        bytes,
      },
    );
  const records = parseCsv(csv);
  if (records.length - 1 > IMPORT_LIMITS.maxRows)
    throw new DomainError(
      "import_too_many_rows",
      `the file has ${records.length - 1} rows; the bound is ${IMPORT_LIMITS.maxRows}`,
      { limit_rows: IMPORT_LIMITS.maxRows, rows: records.length - 1 },
    );
  return checkRows(records);
}

/**
 * Takes a file: the checks that refuse it whole (size, rows, CSV syntax) and who may import answer at
 * once; the rows are the job's (runImport, in the worker). The file is kept with the job until it ends.
 */
export async function acceptImport(
  deps: Pick<Deps, "db" | "clock">,
  principal: Principal,
  input: { csv: string; dryRun: boolean; requestId: string },
): Promise<ImportJobRow> {
  const s = scopeOf(principal);
  if (!s.all && s.adminOrganizations.size === 0)
    throw new Forbidden("only super_admins and organization admins import users");
  const checked = checkImportFile(input.csv);
  const { orgs } = await resolveNames(deps.db, checked);
  const organizationIds = new Set<string>();
  for (const c of checked) {
    if (!c.ok) continue;
    try {
      const org = target(s, c.row, orgs);
      if (org) organizationIds.add(org.id);
    } catch (err) {
      if (!(err instanceof RowRefused)) throw err;
    }
  }
  const job = {
    id: `imp_${newId("usr").slice(4)}`,
    actor_id: principal.userId,
    organization_ids: [...organizationIds],
    dry_run: input.dryRun,
    csv: input.csv,
    rows_total: checked.length,
    request_id: input.requestId,
    created_at: deps.clock.now(),
  };
  await insertImportJob(deps.db, job);
  return (await findImportJob(deps.db, job.id)) as ImportJobRow;
}

/** The worker's hooks into a job it runs (worker/userImports.ts). */
export interface JobHooks {
  /** Seals a temporary password for the row's record (secretBox.ts, bound to the import and the account). */
  seal(password: string, aad: string): string;
  /** Extends the job's claim before each chunk; false: another worker holds it now, stop. */
  keepClaim(): Promise<boolean>;
}

/** The job's claim went to another worker: this one stops where it is (every row done is recorded). */
export class ClaimLost extends Error {
  override name = "ClaimLost";
}

/** What a temporary password is bound to when sealed: a sealed value copied elsewhere does not open. */
export const passwordAad = (importId: string, userId: string) => `user_import:${importId}:${userId}`;

/**
 * Runs a job's rows from where it stands: a real run skips the rows already recorded (each row's record
 * commits with what the row did), a dry run (which wrote nothing) starts again. Answers the counts.
 */
export async function runImport(deps: D, job: ImportJobRow, hooks: JobHooks): Promise<Record<Outcome, number>> {
  const loaded = await loadPrincipal(deps.db, job.actor_id);
  if (!loaded || loaded.disabled) throw new Forbidden("the account that started the import is gone or disabled");
  const principal = loaded.principal;
  const s = scopeOf(principal);
  if (!s.all && s.adminOrganizations.size === 0)
    throw new Forbidden("the account that started the import is no longer an administrator");
  if (job.csv === null) throw new Error(`import ${job.id} has no file`);
  const checked = checkImportFile(job.csv);
  if (job.dry_run) await deleteImportRows(deps.db, job.id);
  const done = job.dry_run ? new Set<number>() : await doneRowIndexes(deps.db, job.id);
  const todo = checked.map((c, idx) => ({ c, idx })).filter((x) => !done.has(x.idx));
  const { orgs, projects } = await resolveNames(deps.db, checked);
  const known = await whatExists(
    deps.db,
    todo.map((x) => x.c),
    orgs,
  );
  const at = deps.clock.now();
  const input = { dryRun: job.dry_run, requestId: job.request_id ?? job.id };
  const perOrg = new Map<string, OrgContext>();

  const refused = (base: RowResult, err: unknown): RowAnswer => {
    if (err instanceof RowRefused || err instanceof DomainError)
      return { result: { ...base, outcome: "error", code: err.code, message: err.message } };
    throw err;
  };
  const answer = (base: RowResult, r: ApplyResult, org: Org | null, project: Project | null): RowAnswer => ({
    result: {
      ...base,
      outcome: r.outcome,
      code: null,
      message: r.notes.join("; "),
      user_id: r.userId,
      organization_id: org?.id ?? null,
      project_id: project?.id ?? null,
      welcome_credit: r.welcome,
    },
    ...(r.password !== undefined ? { password: r.password } : {}),
  });
  /**
   * A row's answer: refused or unchanged without a transaction; otherwise `inWorld` applies it all or
   * nothing (in its transaction, or in the dry run's staged copy).
   */
  const runRow = async (
    c: CheckedRow,
    inWorld: (run: (world: RowWorld) => Promise<RowAnswer>) => Promise<RowAnswer>,
  ): Promise<RowAnswer> => {
    const base = echo(c);
    if (!c.ok) return { result: { ...base, outcome: "error", code: c.code, message: c.message } };
    let org: Org | null;
    let project: Project | null;
    try {
      org = target(s, c.row, orgs);
      project = org && c.row.project !== null ? findProject(projects, org, c.row.project) : null;
    } catch (err) {
      return refused(base, err);
    }
    const same = unchanged(c.row, org, project, known);
    if (same) return answer(base, same, org, project);
    const row = c.row;
    return inWorld(async (world) => {
      try {
        const r = await applyRow(world, principal, row, org, project, org ? perOrg.get(org.id) : undefined, at, input);
        return answer(base, r, org, project);
      } catch (err) {
        return refused(base, err);
      }
    });
  };

  // The organizations' wallets and welcome amounts are read (the wallets made) once, before any row: a
  // row rolled back must not take a wallet other rows were told about with it.
  const fileOrganizations = () =>
    [
      ...new Set(
        checked.flatMap((c) =>
          c.ok && c.row.organization
            ? [orgs.get(c.row.organization) ?? orgs.get(c.row.organization.toLowerCase())]
            : [],
        ),
      ),
    ].flatMap((org) => (org && canSeeOrganization(s, org.id) ? [org] : []));
  const prepare = async (db: Knex) => {
    for (const org of fileOrganizations()) {
      if (perOrg.has(org.id)) continue;
      const { wallet } = await ensureWallet(db, { organizationId: org.id, kind: "organization", id: org.id }, at);
      perOrg.set(org.id, { walletId: wallet.id, welcome: await welcomeAmount(db, org.id) });
    }
  };
  const keep = async () => {
    if (!(await hooks.keepClaim())) throw new ClaimLost(`import ${job.id} is held by another worker now`);
  };

  if (job.dry_run) {
    // Nothing is written but the rows' records: the rows are played out in memory on what was read up
    // front (DryWorld), the organizations' wallets drawn row by row as the import will draw them. Playing
    // the import and rolling it back cost more than the import itself (a transaction, savepoint, password,
    // hash, ledger movements and notifications per row, then the rollback): bench/src/user-import.ts.
    const payers = new Map<string, WalletRow>();
    for (const org of fileOrganizations()) {
      const wallet = (
        await findWalletsByOwners(deps.db, [{ organizationId: org.id, kind: "organization", id: org.id }])
      )[0];
      // A wallet not made yet pays nothing: as the new one the import would make.
      const w =
        wallet ?? ({ id: `dry-run:${org.id}`, balance: "0", overdraft: "0", allow_negative: false } as WalletRow);
      payers.set(w.id, w);
      perOrg.set(org.id, { walletId: w.id, welcome: await welcomeAmount(deps.db, org.id) });
    }
    const dry = new DryWorld(known, payers);
    for (let i = 0; i < todo.length; i += CHUNK) {
      await keep();
      const records: ImportRowRecord[] = [];
      for (const { c, idx } of todo.slice(i, i + CHUNK)) {
        const a = await runRow(c, (run) => dry.row(run));
        records.push({ idx, outcome: a.result.outcome, result: a.result });
      }
      await insertImportRows(deps.db, job.id, records);
    }
  } else {
    await prepare(deps.db);
    // A row that did something commits its record (and its sealed password) with it; a row that did
    // nothing (refused, unchanged) is recorded with others of its chunk: lost in a crash, it is only done
    // again on resume, as harmlessly.
    for (let i = 0; i < todo.length; i += CHUNK) {
      await keep();
      const loose: ImportRowRecord[] = [];
      for (const { c, idx } of todo.slice(i, i + CHUNK)) {
        const a = await runRow(c, (run) =>
          rowTransaction(
            deps.db,
            (tx) => run(dbWorld(deps, tx)),
            async (tx, a) => {
              const sealed =
                a.password !== undefined && a.result.user_id !== null
                  ? hooks.seal(a.password, passwordAad(job.id, a.result.user_id))
                  : null;
              await insertImportRows(tx, job.id, [
                { idx, outcome: a.result.outcome, result: a.result, sealed_password: sealed },
              ]);
              a.recorded = true;
            },
          ),
        );
        if (!a.recorded) loose.push({ idx, outcome: a.result.outcome, result: a.result });
      }
      await insertImportRows(deps.db, job.id, loose);
    }
  }

  const counts: Record<Outcome, number> = { create: 0, update: 0, unchanged: 0, error: 0 };
  for (const [k, n] of Object.entries(await countImportRows(deps.db, job.id))) counts[k as Outcome] = n;
  return counts;
}

/** A row's answer: its result, the password of an account it made, and whether its record is written. */
interface RowAnswer {
  result: RowResult;
  password?: string;
  recorded?: boolean;
}

const ROLLBACK = new Error("roll back");
const CHUNK = 50;

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

function echo(c: CheckedRow): RowResult {
  return {
    line: c.line,
    email: c.ok ? c.row.email : c.raw.email,
    name: c.raw.name,
    organization: c.raw.organization,
    project: c.raw.project,
    role: c.raw.role,
    initial_credits: c.raw.initial_credits,
    outcome: "error",
    code: null,
    message: "",
    user_id: null,
    organization_id: null,
    project_id: null,
    welcome_credit: null,
  };
}

async function resolveNames(db: Knex, checked: CheckedRow[]) {
  const orgRefs = [...new Set(checked.flatMap((c) => (c.ok && c.row.organization ? [c.row.organization] : [])))];
  const orgRows: Org[] =
    orgRefs.length === 0
      ? []
      : await db("organizations")
          .whereIn("id", orgRefs)
          .orWhereIn(
            "slug",
            orgRefs.map((r) => r.toLowerCase()),
          )
          .select("id", "slug", "name");
  const orgs = new Map<string, Org>();
  for (const o of orgRows) {
    orgs.set(o.id, o);
    orgs.set(o.slug, o);
  }
  const orgIds = [...new Set(orgRows.map((o) => o.id))];
  const projects: Project[] =
    orgIds.length === 0
      ? []
      : await db("projects").whereIn("organization_id", orgIds).select("id", "name", "organization_id");
  return { orgs, projects };
}

/** The row's organization, if the caller may import into it; super_admins may also import without one. */
function target(s: ReturnType<typeof scopeOf>, row: ImportRow, orgs: Map<string, Org>): Org | null {
  if (row.organization === null) {
    if (!s.all) throw new RowRefused("missing_organization", "name the organization the person joins");
    return null;
  }
  const org = orgs.get(row.organization) ?? orgs.get(row.organization.toLowerCase());
  // Outside the caller's view an organization is as unknown as one that does not exist (scope.ts).
  if (!org || !canSeeOrganization(s, org.id))
    throw new RowRefused(
      "unknown_organization",
      `no organization "${row.organization}" (by id or slug) that you may see`,
    );
  if (!s.all && !s.adminOrganizations.has(org.id))
    throw new RowRefused("forbidden", `you are not an admin of ${org.slug}: only its admins import into it`);
  return org;
}

function findProject(projects: Project[], org: Org, ref: string): Project {
  const p = projects.find((x) => x.organization_id === org.id && (x.id === ref || x.name === ref));
  if (!p) throw new RowRefused("unknown_project", `no project "${ref}" in ${org.slug}`);
  return p;
}

/**
 * What a row reads and writes. The import: the database, in the row's transaction (DbWorld). The dry run:
 * a copy in memory of what was read up front (DryWorld), so it writes nothing, so it needs no transaction,
 * savepoint, lock, password or hash per row, only what decides the row's outcome. applyRow is the same for
 * both, so what the dry run shows is what the real run does.
 */
interface RowWorld {
  findUser(email: string): Promise<UserRow | undefined>;
  /** Makes the account; the import answers its temporary password, the dry run none. */
  createUser(row: ImportRow): Promise<{ user: UserRow; password?: string }>;
  role(userId: string, organizationId: string, projectId: string | null): Promise<string | undefined>;
  setRole(userId: string, organizationId: string, projectId: string | null, role: string): Promise<void>;
  userWallet(organizationId: string, userId: string, at: Date): Promise<string>;
  /** ledger.ts transfer: a used key answers replayed; a payer short of credits, 409 insufficient_credits. */
  transfer(t: Transfer): Promise<{ replayed: boolean }>;
  notify(n: NewNotification): Promise<void>;
}

function dbWorld(deps: D, tx: Knex.Transaction): RowWorld {
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

/**
 * The dry run's world: what was read up front (accounts, memberships, ledger keys, the paying wallets),
 * changed row by row in memory. A row's changes are kept only if it is not refused, as its transaction
 * would be committed or rolled back.
 */
class DryWorld {
  readonly #known: Known;
  /** Paying wallets (the organizations'), their balance as the rows above left it. */
  readonly #payers: Map<string, WalletRow>;

  constructor(known: Known, payers: Map<string, WalletRow>) {
    this.#known = known;
    this.#payers = payers;
  }

  /** Runs a row against a staged copy; its changes are kept unless it is refused. */
  async row(run: (world: RowWorld) => Promise<RowAnswer>): Promise<RowAnswer> {
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

async function applyRow(
  world: RowWorld,
  principal: Principal,
  row: ImportRow,
  org: Org | null,
  project: Project | null,
  ctx: OrgContext | undefined,
  at: Date,
  input: { dryRun: boolean; requestId: string },
): Promise<ApplyResult> {
  const notes: string[] = [];
  let changed = false;
  let created = false;
  let password: string | undefined;
  let user = await world.findUser(row.email);
  if (!user) {
    const made = await world.createUser(row);
    user = made.user;
    password = made.password;
    created = true;
    notes.push("account created; the temporary password must be changed at first sign-in");
  } else if (row.name !== null && row.name !== user.display_name) {
    // The account is the person's, maybe known to other organizations: an import does not rename it.
    notes.push("the account exists; its name is left as it is");
  }

  let joinedOrganization = false;
  if (org) {
    const orgRole = project === null ? (row.role as "member" | "org_admin") : undefined;
    const current = created ? undefined : await world.role(user.id, org.id, null);
    if (current === undefined || (orgRole !== undefined && current !== orgRole)) {
      await world.setRole(user.id, org.id, null, orgRole ?? "member");
      changed = true;
      joinedOrganization = current === undefined;
      notes.push(
        current !== undefined
          ? `role in ${org.slug}: ${current} → ${orgRole}`
          : `joined ${org.slug} as ${orgRole ?? "member"}`,
      );
    }
    if (project) {
      const projectRole = row.role as "member" | "project_admin";
      const inProject = created ? undefined : await world.role(user.id, org.id, project.id);
      if (inProject === undefined || inProject !== projectRole) {
        await world.setRole(user.id, org.id, project.id, projectRole);
        changed = true;
        notes.push(
          inProject !== undefined
            ? `role in ${project.name}: ${inProject} → ${projectRole}`
            : `joined ${project.name} as ${projectRole}`,
        );
      }
    }
  }

  let userWalletId: string | undefined;
  if (org && ctx && row.initialCredits > 0n) {
    userWalletId = await world.userWallet(org.id, user.id, at);
    try {
      // The key makes it once per person and organization: a replay answers the earlier movement.
      const r = await world.transfer({
        kind: "allocation",
        fromWalletId: ctx.walletId,
        toWalletId: userWalletId,
        amount: row.initialCredits,
        actorKind: "user",
        actorId: principal.userId,
        requestId: input.requestId,
        reason: "initial credits (import)",
        organizationId: org.id,
        idempotencyKey: initialKey(org.id, user.id),
        metadata: { import: true },
        at,
      });
      if (r.replayed) notes.push("initial credits were paid by an earlier import; not again");
      else {
        changed = true;
        notes.push(`${formatCredits(row.initialCredits)} initial credits paid from ${org.slug}`);
      }
    } catch (err) {
      if (err instanceof DomainError && err.code === "insufficient_credits")
        throw new RowRefused(
          "insufficient_credits",
          `${org.slug}'s wallet cannot pay ${formatCredits(row.initialCredits)} initial credits (spendable ${formatCredits(BigInt(String(err.details.spendable ?? "0")))}); nothing of this row was imported`,
        );
      throw err;
    }
  }

  let welcome: "given" | "unpaid" | null = null;
  if (org && ctx && joinedOrganization && ctx.welcome > 0n) {
    // Once ever by its ledger key; a wallet short of it leaves the member joined and the credit unpaid.
    const w = await payWelcome((t) => world.transfer(t), {
      organizationId: org.id,
      userId: user.id,
      actorKind: "user",
      actorId: principal.userId,
      requestId: input.requestId,
      at,
      amount: ctx.welcome,
      fromWalletId: ctx.walletId,
      toWalletId: userWalletId ?? (await world.userWallet(org.id, user.id, at)),
    });
    if (w.status === "given") {
      welcome = "given";
      notes.push(`welcome credit of ${formatCredits(ctx.welcome)} paid`);
    } else if (w.status === "unpaid") {
      welcome = "unpaid";
      notes.push(`welcome credit of ${formatCredits(ctx.welcome)} NOT paid: ${org.slug}'s wallet cannot cover it`);
    }
  }

  if (created) {
    await world.notify({
      userId: user.id,
      organizationId: org?.id ?? null,
      kind: "account.created",
      title: "Welcome to Berth",
      body: org
        ? `An administrator made your account and added you to ${org.name}${project ? ` (${project.name})` : ""}. Choose your own password now: the one you were given was temporary.`
        : "An administrator made your account. Choose your own password now: the one you were given was temporary.",
      data: { organization_id: org?.id ?? null, project_id: project?.id ?? null, role: row.role },
      at,
    });
  } else if (changed && org) {
    await world.notify({
      userId: user.id,
      organizationId: org.id,
      kind: "membership.added",
      title: `You are in ${org.name}`,
      body: `An administrator set your place in ${org.name}${project ? ` (${project.name})` : ""}: ${row.role}.`,
      data: { organization_id: org.id, project_id: project?.id ?? null, role: row.role },
      at,
    });
  }
  return {
    outcome: created ? "create" : changed ? "update" : "unchanged",
    userId: user.id,
    ...(password !== undefined ? { password } : {}),
    notes,
    welcome,
  };
}

/** An import with its progress; its rows once it has ended. */
export interface ImportView {
  job: ImportJobRow;
  counts: Record<Outcome, number>;
  rowsDone: number;
  results: RowResult[] | undefined;
}

const ended = (job: ImportJobRow) => job.state === "succeeded" || job.state === "failed";

/** An import, seen by whoever ran it and by super_admins; 404 for anyone else (existence not revealed). */
async function visibleJob(db: Knex, principal: Principal, id: string): Promise<ImportJobRow> {
  const job = await findImportJob(db, id);
  if (!job || (!principal.isSuperAdmin && job.actor_id !== principal.userId)) throw new NotFound("user_import", id);
  return job;
}

export async function getImport(deps: Pick<Deps, "db">, principal: Principal, id: string): Promise<ImportView> {
  const job = await visibleJob(deps.db, principal, id);
  const counts: Record<Outcome, number> = { create: 0, update: 0, unchanged: 0, error: 0 };
  const live = ended(job) ? job.counts : await countImportRows(deps.db, id);
  for (const [k, n] of Object.entries(live)) counts[k as Outcome] = n;
  const rowsDone = counts.create + counts.update + counts.unchanged + counts.error;
  const results = ended(job) ? ((await importRowResults(deps.db, id)) as RowResult[]) : undefined;
  return { job, counts, rowsDone, results };
}

/** The rows' results, once the import has ended (409 import_not_finished before). */
export async function getImportResults(
  deps: Pick<Deps, "db">,
  principal: Principal,
  id: string,
): Promise<{ job: ImportJobRow; results: RowResult[] }> {
  const job = await visibleJob(deps.db, principal, id);
  if (!ended(job)) throw notFinished(job);
  return { job, results: (await importRowResults(deps.db, id)) as RowResult[] };
}

const notFinished = (job: ImportJobRow) =>
  new DomainError("import_not_finished", `the import is ${job.state}; ask again when it has ended`, {
    state: job.state,
  });

/**
 * The temporary passwords of the accounts an import made, given once to the administrator who started it
 * (still an administrator: a super_admin, or an admin of an organization the import went into) and erased
 * in the same transaction. Anyone else who may see the import gets 403; a second fetch, or one after the
 * retention, 410 import_passwords_gone. An import that made no account (a dry run) has none: an empty list.
 */
export async function takeTemporaryPasswords(
  deps: Pick<Deps, "db" | "clock">,
  principal: Principal,
  id: string,
  open: (sealed: string, aad: string) => string,
): Promise<{ email: string; user_id: string; password: string }[]> {
  const job = await visibleJob(deps.db, principal, id);
  const refuse = () => new Forbidden("only the administrator who started the import may fetch its temporary passwords");
  if (job.actor_id !== principal.userId) throw refuse();
  if (!ended(job)) throw notFinished(job);
  if (job.passwords === "none") return [];
  // Still an administrator where the import made accounts: a demoted admin no longer hands out access.
  const s = scopeOf(principal);
  if (!s.all && !job.organization_ids.some((o) => s.adminOrganizations.has(o))) throw refuse();
  const taken = await takeSealedPasswords(deps.db, id, deps.clock.now());
  if (!taken) {
    const now = (await findImportJob(deps.db, id)) ?? job;
    throw new DomainError(
      "import_passwords_gone",
      now.passwords === "expired"
        ? "the temporary passwords were erased by the retention before they were fetched; reset those accounts' passwords"
        : "the temporary passwords were fetched already and erased; reset those accounts' passwords",
      {
        reason: now.passwords === "expired" ? "expired" : "fetched",
        ...(now.passwords_ended_at ? { at: new Date(now.passwords_ended_at).toISOString() } : {}),
      },
    );
  }
  return taken.map((t) => {
    const r = t.result as RowResult;
    const userId = r.user_id as string;
    return { email: r.email, user_id: userId, password: open(t.sealed_password, passwordAad(id, userId)) };
  });
}
