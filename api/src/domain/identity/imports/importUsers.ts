// Bulk user import (docs/dev/identity.md, "Bulk import"). One function serves the dry run and the real
// run, so what the dry run shows is what the real run does:
// - Each row is applied in a transaction of its own (a savepoint in the dry run, whose outer transaction
//   is rolled back at the end). A row is all or nothing — its account, memberships, initial credits and
//   notification — and one bad row does not stop the 9,999 good ones; the dry run sees earlier rows'
//   effects (an organization's balance drawn by the rows above) as the real run will.
// - Idempotent per email: a row whose account, memberships and initial credits are already as it says
//   is `unchanged`; initial credits are paid once per person and organization (ledger key
//   `import:initial:<organization>:<user>`), the welcome credit once ever (credits/welcome.ts).
// - New accounts get a generated temporary password (must change it at first sign-in, as accounts made
//   by an administrator do), answered once to the importer and stored nowhere in clear; the person's bell
//   gets a welcome notification.
import type { Knex } from "knex";
import { findMembership } from "../../../db/operations/memberships/findMembership.ts";
import { upsertMembership } from "../../../db/operations/memberships/upsertMembership.ts";
import { findUserByEmail } from "../../../db/operations/users/findUserByEmail.ts";
import { insertUser } from "../../../db/operations/users/insertUser.ts";
import type { UserRow } from "../../../db/operations/users/types.ts";
import { sqlState, UNIQUE_VIOLATION } from "../../../db/sqlstate.ts";
import type { Deps } from "../../../deps.ts";
import { DomainError, Forbidden, NotFound } from "../../../errors.ts";
import { SYSTEM_WALLET } from "../../credits/ids.ts";
import { transfer } from "../../credits/ledger.ts";
import { formatCredits } from "../../credits/money.ts";
import { ensureWallet } from "../../credits/wallets.ts";
import { giveWelcomeCredit, welcomeAmount } from "../../credits/welcome.ts";
import { notify } from "../../notifications/notify.ts";
import { newId } from "../ids.ts";
import { generatePassword } from "../password.ts";
import type { Principal } from "../principal.ts";
import { canSeeOrganization, scopeOf } from "../scope.ts";
import { parseCsv } from "./csv.ts";
import { type CheckedRow, checkRows, type ImportRow } from "./rows.ts";

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

export interface ImportRecord {
  id: string;
  actor_id: string;
  organization_ids: string[];
  dry_run: boolean;
  counts: Record<Outcome, number>;
  results: RowResult[];
  created_at: Date;
}

export interface ImportAnswer {
  record: ImportRecord;
  /** Real runs only: the temporary password of each account created, answered this once. */
  passwords: { email: string; user_id: string; password: string }[];
}

type D = Pick<Deps, "db" | "clock" | "auth">;

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

/** A few queries for the whole file (in chunks), so that a row already as it says costs nothing more. */
async function whatExists(db: Knex, checked: CheckedRow[]): Promise<Known> {
  const emails = checked.flatMap((c) => (c.ok ? [c.row.email] : []));
  const known: Known = { users: new Map(), roles: new Map(), keys: new Set() };
  for (let i = 0; i < emails.length; i += 1000) {
    const users = (await db("users").whereIn("email", emails.slice(i, i + 1000))) as UserRow[];
    for (const u of users) known.users.set(u.email, u);
    const ids = users.map((u) => u.id);
    if (ids.length === 0) continue;
    const ms = await db("memberships")
      .whereIn("user_id", ids)
      .select("user_id", "organization_id", "project_id", "role");
    for (const m of ms) known.roles.set(roleKey(m.user_id, m.organization_id, m.project_id), m.role);
    const keys = await db("ledger_transactions")
      .whereIn(
        "idempotency_key",
        users.flatMap((u) =>
          ms.filter((m) => m.user_id === u.id && m.project_id === null).map((m) => initialKey(m.organization_id, u.id)),
        ),
      )
      .pluck("idempotency_key");
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

export async function importUsers(
  deps: D,
  principal: Principal,
  input: { csv: string; dryRun: boolean; requestId: string },
): Promise<ImportAnswer> {
  const s = scopeOf(principal);
  if (!s.all && s.adminOrganizations.size === 0)
    throw new Forbidden("only super_admins and organization admins import users");
  const checked = checkImportFile(input.csv);
  const { orgs, projects } = await resolveNames(deps.db, checked);
  const known = await whatExists(deps.db, checked);
  const at = deps.clock.now();
  const perOrg = new Map<string, OrgContext>();
  const passwords: ImportAnswer["passwords"] = [];
  const results: RowResult[] = [];

  const refused = (base: RowResult, err: unknown): RowResult => {
    if (err instanceof RowRefused || err instanceof DomainError)
      return { ...base, outcome: "error", code: err.code, message: err.message };
    throw err;
  };
  const answer = (base: RowResult, r: ApplyResult, org: Org | null, project: Project | null): RowResult => ({
    ...base,
    outcome: r.outcome,
    code: null,
    message: r.notes.join("; "),
    user_id: r.userId,
    organization_id: org?.id ?? null,
    project_id: project?.id ?? null,
    welcome_credit: r.welcome,
  });
  /**
   * A row's answer: refused or unchanged without a transaction; otherwise `inTransaction` opens one (or
   * a savepoint) and the row is applied there, all or nothing.
   */
  const runRow = async (
    c: CheckedRow,
    inTransaction: (run: (tx: Knex.Transaction) => Promise<RowResult>) => Promise<RowResult>,
  ): Promise<RowResult> => {
    const base = echo(c);
    if (!c.ok) return { ...base, outcome: "error", code: c.code, message: c.message };
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
    return inTransaction(async (tx) => {
      try {
        const r = await applyRow(
          deps,
          tx,
          principal,
          row,
          org,
          project,
          org ? perOrg.get(org.id) : undefined,
          at,
          input,
        );
        if (r.password && !input.dryRun) passwords.push({ email: row.email, user_id: r.userId, password: r.password });
        return answer(base, r, org, project);
      } catch (err) {
        return refused(base, err);
      }
    });
  };

  // The organizations' wallets and welcome amounts are read (the wallets made) once, before any row: a
  // row rolled back must not take a wallet other rows were told about with it.
  const prepare = async (db: Knex) => {
    for (const org of new Set(
      checked.flatMap((c) =>
        c.ok && c.row.organization ? [orgs.get(c.row.organization) ?? orgs.get(c.row.organization.toLowerCase())] : [],
      ),
    )) {
      if (!org || perOrg.has(org.id) || !canSeeOrganization(s, org.id)) continue;
      const { wallet } = await ensureWallet(db, { organizationId: org.id, kind: "organization", id: org.id }, at);
      perOrg.set(org.id, { walletId: wallet.id, welcome: await welcomeAmount(db, org.id) });
    }
  };

  if (input.dryRun) {
    // Transactions that are rolled back, each row in a savepoint, so that a row sees what the rows above
    // it did. Chunks of DRY_RUN_CHUNK rows: past 64 subtransactions Postgres's per-transaction cache
    // overflows and every visibility check slows down (one transaction for 1,000 rows took 3× the real
    // import: bench/src/user-import.ts). What crosses a chunk is what one row can do to another, the
    // organizations' balances: each chunk first takes out what the chunks before it drew.
    const drawn = new Map<string, bigint>();
    for (let i = 0; i < checked.length; i += DRY_RUN_CHUNK) {
      await deps.db
        .transaction(async (outer) => {
          perOrg.clear();
          await prepare(outer);
          for (const [orgId, amount] of drawn) {
            const ctx = perOrg.get(orgId);
            if (ctx && amount > 0n)
              await transfer(outer, {
                kind: "allocation",
                fromWalletId: ctx.walletId,
                toWalletId: SYSTEM_WALLET,
                amount,
                partial: true,
                actorKind: "system",
                actorId: null,
                reason: "dry run: what earlier rows drew",
                at,
              });
          }
          const before = await orgBalances(outer, perOrg);
          for (const c of checked.slice(i, i + DRY_RUN_CHUNK))
            results.push(await runRow(c, (run) => rowTransaction(outer, run)));
          for (const [orgId, after] of await orgBalances(outer, perOrg))
            drawn.set(orgId, (drawn.get(orgId) ?? 0n) + ((before.get(orgId) ?? after) - after));
          throw ROLLBACK;
        })
        .catch((err) => {
          if (err !== ROLLBACK) throw err;
        });
    }
  } else {
    await prepare(deps.db);
    for (const c of checked) results.push(await runRow(c, (run) => rowTransaction(deps.db, run)));
  }

  const counts: Record<Outcome, number> = { create: 0, update: 0, unchanged: 0, error: 0 };
  for (const r of results) counts[r.outcome]++;
  const record: ImportRecord = {
    id: `imp_${newId("usr").slice(4)}`,
    actor_id: principal.userId,
    organization_ids: [...new Set(results.flatMap((r) => (r.organization_id ? [r.organization_id] : [])))],
    dry_run: input.dryRun,
    counts,
    results,
    created_at: at,
  };
  await deps.db("user_imports").insert({
    ...record,
    counts: JSON.stringify(counts),
    results: JSON.stringify(results),
  });
  return { record, passwords };
}

const ROLLBACK = new Error("dry run: roll back");
const DRY_RUN_CHUNK = 50;

async function orgBalances(db: Knex, perOrg: Map<string, OrgContext>): Promise<Map<string, bigint>> {
  const ids = [...perOrg.values()].map((c) => c.walletId);
  const rows = ids.length === 0 ? [] : await db("wallets").whereIn("id", ids).select("id", "balance");
  const byWallet = new Map(rows.map((r: { id: string; balance: string }) => [r.id, BigInt(r.balance)]));
  return new Map([...perOrg].map(([orgId, c]) => [orgId, byWallet.get(c.walletId) ?? 0n]));
}

/**
 * A failed row leaves nothing behind: its own transaction (real run) or, given a transaction, a savepoint
 * in it (dry run). A password is handed out only for a row that committed.
 */
async function rowTransaction(db: Knex, run: (tx: Knex.Transaction) => Promise<RowResult>): Promise<RowResult> {
  let answer: RowResult | undefined;
  await db
    .transaction(async (tx) => {
      answer = await run(tx);
      if (answer.outcome === "error") throw ROLLBACK;
    })
    .catch((err) => {
      if (err !== ROLLBACK) throw err;
    });
  return answer as RowResult;
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

async function applyRow(
  deps: D,
  tx: Knex.Transaction,
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
  let user = await findUserByEmail(tx, row.email);
  if (!user) {
    password = generatePassword();
    try {
      user = await insertUser(tx, {
        id: newId("usr"),
        email: row.email,
        displayName: row.name,
        passwordHash: deps.auth.hasher.hashGenerated(password),
        mustChangePassword: true,
        isSuperAdmin: false,
      });
    } catch (err) {
      if (sqlState(err) === UNIQUE_VIOLATION)
        throw new RowRefused("conflict", "the account was created by someone else meanwhile; run the import again");
      throw err;
    }
    created = true;
    notes.push("account created; the temporary password must be changed at first sign-in");
  } else if (row.name !== null && row.name !== user.display_name) {
    // The account is the person's, maybe known to other organizations: an import does not rename it.
    notes.push("the account exists; its name is left as it is");
  }

  let joinedOrganization = false;
  if (org) {
    const orgRole = project === null ? (row.role as "member" | "org_admin") : undefined;
    const current = created
      ? undefined
      : await findMembership(tx, { userId: user.id, organizationId: org.id, projectId: null });
    if (!current || (orgRole !== undefined && current.role !== orgRole)) {
      await upsertMembership(tx, {
        userId: user.id,
        organizationId: org.id,
        projectId: null,
        role: orgRole ?? "member",
      });
      changed = true;
      joinedOrganization = !current;
      notes.push(
        current ? `role in ${org.slug}: ${current.role} → ${orgRole}` : `joined ${org.slug} as ${orgRole ?? "member"}`,
      );
    }
    if (project) {
      const projectRole = row.role as "member" | "project_admin";
      const inProject = created
        ? undefined
        : await findMembership(tx, { userId: user.id, organizationId: org.id, projectId: project.id });
      if (!inProject || inProject.role !== projectRole) {
        await upsertMembership(tx, {
          userId: user.id,
          organizationId: org.id,
          projectId: project.id,
          role: projectRole,
        });
        changed = true;
        notes.push(
          inProject
            ? `role in ${project.name}: ${inProject.role} → ${projectRole}`
            : `joined ${project.name} as ${projectRole}`,
        );
      }
    }
  }

  let userWalletId: string | undefined;
  if (org && ctx && row.initialCredits > 0n) {
    userWalletId = (await ensureWallet(tx, { organizationId: org.id, kind: "user", id: user.id }, at)).wallet.id;
    try {
      // The key makes it once per person and organization: a replay answers the earlier movement.
      const r = await transfer(tx, {
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
  if (org && ctx && joinedOrganization) {
    const w = await giveWelcomeCredit(tx, {
      organizationId: org.id,
      userId: user.id,
      actorKind: "user",
      actorId: principal.userId,
      requestId: input.requestId,
      at,
      known: {
        amount: ctx.welcome,
        organizationWalletId: ctx.walletId,
        ...(userWalletId !== undefined ? { userWalletId } : {}),
      },
    });
    if (w.status === "given") {
      welcome = "given";
      notes.push(`welcome credit of ${formatCredits(w.amount)} paid`);
    } else if (w.status === "unpaid") {
      welcome = "unpaid";
      notes.push(`welcome credit of ${formatCredits(w.amount)} NOT paid: ${org.slug}'s wallet cannot cover it`);
    }
  }

  if (created) {
    await notify(tx, {
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
    await notify(tx, {
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

/** An import, seen by whoever ran it and by super_admins; 404 for anyone else (existence not revealed). */
export async function getImport(deps: Pick<Deps, "db">, principal: Principal, id: string): Promise<ImportRecord> {
  const r = (await deps.db("user_imports").where({ id }).first()) as ImportRecord | undefined;
  if (!r || (!principal.isSuperAdmin && r.actor_id !== principal.userId)) throw new NotFound("user_import", id);
  return r;
}
