// The row rules of a bulk import: what a row means (its organization and project resolved under the
// importer's scope), what it is refused for, and what applying it does (applyRow: account, memberships,
// initial and welcome credits, notification) and answers (its outcome and result). They are played on a
// RowWorld, a staged copy in memory of what was read (stagedWorld.ts), by both back ends: the real run writes
// what a chunk's rows did (dbWorld.ts), the dry run drops it (dryWorld.ts), so what the dry run shows is
// what the real run does.
import type { UserRow } from "../../../db/operations/users/types.ts";
import { DomainError } from "../../../errors.ts";
import type { Transfer } from "../../credits/ledger.ts";
import { formatCredits } from "../../credits/money.ts";
import { payWelcome } from "../../credits/welcome.ts";
import type { NewNotification } from "../../notifications/notify.ts";
import type { Principal } from "../principal.ts";
import { canSeeOrganization, type scopeOf } from "../scope.ts";
import { initialKey, type Known, type Org, orgOf, type Project, roleKey } from "./known.ts";
import type { CheckedRow, ImportRow } from "./rows.ts";

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

/** An organization's paying wallet and welcome amount, read (the wallet made) once before any row. */
export interface OrgContext {
  walletId: string;
  welcome: bigint;
}

/** What every row of one run shares: who imports, the names it resolved, the run's time and request. */
export interface ImportRun {
  principal: Principal;
  scope: ReturnType<typeof scopeOf>;
  orgs: Map<string, Org>;
  projects: Project[];
  perOrg: Map<string, OrgContext>;
  at: Date;
  input: { dryRun: boolean; requestId: string };
}

interface ApplyResult {
  outcome: Outcome;
  userId: string;
  password?: string;
  notes: string[];
  welcome: "given" | "unpaid" | null;
}

/** A row's refusal found while resolving or applying it: the row rolls back and reports the code. */
export class RowRefused extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

/** A row's answer: its result, and the password of an account it made. */
export interface RowAnswer {
  result: RowResult;
  password?: string;
}

/**
 * What a row reads and writes: a staged copy of what was read (stagedWorld.ts), kept only if the row is
 * not refused, so a row is all or nothing without a transaction or savepoint of its own.
 */
export interface RowWorld {
  findUser(email: string): Promise<UserRow | undefined>;
  /** Makes the account; the import answers its temporary password, the dry run none. */
  createUser(row: ImportRow): Promise<{ user: UserRow; password?: string }>;
  role(userId: string, organizationId: string, projectId: string | null): Promise<string | undefined>;
  setRole(userId: string, organizationId: string, projectId: string | null, role: string): Promise<void>;
  userWallet(organizationId: string, userId: string, at: Date): Promise<string>;
  /** ledger.ts transfer: a used key answers replayed; a payer short of credits, 409 insufficient_credits. */
  transfer(t: Transfer): Promise<{ replayed: boolean; transaction?: { id: string } | null }>;
  notify(n: NewNotification): Promise<void>;
}

/** The organizations the file names that the importer may see: the ones whose wallets pay. */
export function fileOrganizations(run: ImportRun, checked: CheckedRow[]): Org[] {
  const named = checked.flatMap((c) => (c.ok && c.row.organization ? [orgOf(run.orgs, c.row.organization)] : []));
  return [...new Set(named)].flatMap((org) => (org && canSeeOrganization(run.scope, org.id) ? [org] : []));
}

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

/** A row with work to do: what it names, resolved. */
interface Resolved {
  base: RowResult;
  row: ImportRow;
  org: Org | null;
  project: Project | null;
}

/** A row's answer when it needs no world (refused, or already as it says), or what it names when it has work. */
function resolve(run: ImportRun, known: Known, c: CheckedRow): { answer: RowAnswer } | Resolved {
  const base = echo(c);
  if (!c.ok) return { answer: { result: { ...base, outcome: "error", code: c.code, message: c.message } } };
  let org: Org | null;
  let project: Project | null;
  try {
    org = target(run.scope, c.row, run.orgs);
    project = org && c.row.project !== null ? findProject(run.projects, org, c.row.project) : null;
  } catch (err) {
    return { answer: refused(base, err) };
  }
  const same = unchanged(c.row, org, project, known);
  if (same) return { answer: answer(base, same, org, project) };
  return { base, row: c.row, org, project };
}

/** The answer of a row that needs no world (refused, or already as `known` says); undefined when it has work. */
export function settledRow(run: ImportRun, known: Known, c: CheckedRow): RowAnswer | undefined {
  const r = resolve(run, known, c);
  return "answer" in r ? r.answer : undefined;
}

/** A row's answer: refused or unchanged without a world; otherwise `inWorld` applies it all or nothing. */
export async function runRow(
  run: ImportRun,
  known: Known,
  c: CheckedRow,
  inWorld: (apply: (world: RowWorld) => Promise<RowAnswer>) => Promise<RowAnswer>,
): Promise<RowAnswer> {
  const r = resolve(run, known, c);
  if ("answer" in r) return r.answer;
  return inWorld(async (world) => {
    try {
      return answer(r.base, await applyRow(world, run, r.row, r.org, r.project), r.org, r.project);
    } catch (err) {
      return refused(r.base, err);
    }
  });
}

/** A row refused as a whole after it was played (its writes met a conflict in the database). */
export const refusedRow = (c: CheckedRow, code: string, message: string): RowAnswer => ({
  result: { ...echo(c), outcome: "error", code, message },
});

/**
 * The answer for a row whose account, memberships and initial credits are already as it says, from what
 * was read; undefined when the row has something to do.
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

/** The row's organization, if the caller may import into it; super_admins may also import without one. */
export function target(s: ReturnType<typeof scopeOf>, row: ImportRow, orgs: Map<string, Org>): Org | null {
  if (row.organization === null) {
    if (!s.all) throw new RowRefused("missing_organization", "name the organization the person joins");
    return null;
  }
  const org = orgOf(orgs, row.organization);
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

/** Applies a row in `world`: what it does there and the notes that tell it. Refusals throw RowRefused. */
async function applyRow(
  world: RowWorld,
  run: ImportRun,
  row: ImportRow,
  org: Org | null,
  project: Project | null,
): Promise<ApplyResult> {
  const { principal, at, input } = run;
  const ctx = org ? run.perOrg.get(org.id) : undefined;
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

/** A row still to run: its check and its index in the file. */
export interface TodoRow {
  c: CheckedRow;
  idx: number;
}
