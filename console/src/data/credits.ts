// Credits in the console: amounts typed by people and shown back to them, wallets named after their
// owners, the wallet the header shows, and the filters of the credits pages. Amounts are strings of
// integer minor units on the wire (1 credit = 1,000,000); here they are BigInt or strings, never floats.
import type { CreditRequest, LedgerLine, Wallet } from "../api/openapi.gen.ts";
import { CREDIT_SCALE, formatCredits } from "./format.ts";
import { type MeForCredits, OWNER_KIND_LABEL } from "./wallets.ts";

export { type HeaderWallet, isNegative, type MeForCredits, OWNER_KIND_LABEL, pickHeaderWallet } from "./wallets.ts";
export { CREDIT_SCALE, formatCredits };

/** The API's largest amount: 18 digits of minor units (`^[1-9][0-9]{0,17}$`). */
const MAX_UNITS = 10n ** 18n - 1n;

export type ParsedCredits = { ok: true; units: string } | { ok: false; problem: string };

/**
 * What a person typed ("12", "12.5", "0.000001") as minor units, exactly: "12.5" -> "12500000".
 * Refuses what is not a plain positive decimal with at most six decimals (no sign, no exponent, no
 * thousands separators, which read differently across locales).
 */
export function parseCredits(input: string): ParsedCredits {
  const s = input.trim().replace(/[\s_]/g, "");
  if (s === "") return { ok: false, problem: "Enter an amount of credits." };
  const m = /^(\d*)(?:\.(\d*))?$/.exec(s);
  if (!m || (m[1] === "" && (m[2] ?? "") === ""))
    return { ok: false, problem: "Use digits and at most one dot, such as 25 or 12.5." };
  const frac = m[2] ?? "";
  if (frac.length > 6) return { ok: false, problem: "At most six decimals (one millionth of a credit)." };
  const units = BigInt(m[1] || "0") * CREDIT_SCALE + BigInt(frac.padEnd(6, "0") || "0");
  if (units <= 0n) return { ok: false, problem: "The amount must be more than zero." };
  if (units > MAX_UNITS) return { ok: false, problem: "That is more than the API accepts in one movement." };
  return { ok: true, units: units.toString() };
}

/** Minor units as a person would type them back: "40000000" -> "40", "12500000" -> "12.5" (no separators). */
export function unitsToInput(minor: string): string {
  const v = BigInt(minor);
  const neg = v < 0n;
  const a = neg ? -v : v;
  const whole = (a / CREDIT_SCALE).toString();
  const frac = (a % CREDIT_SCALE).toString().padStart(6, "0").replace(/0+$/, "");
  return `${neg ? "-" : ""}${whole}${frac ? `.${frac}` : ""}`;
}

/** A signed movement: "+25.50", "−40.00", "0.00". */
export function formatSignedCredits(minor: string): string {
  const v = BigInt(minor);
  return v > 0n ? `+${formatCredits(v)}` : formatCredits(v);
}

/** "12.50 credits" (decimals read as plural, "1.00 credits" too). */
export function creditsText(minor: string | bigint): string {
  return `${formatCredits(BigInt(minor))} credits`;
}

// ---- Wallets and their owners ----

/** Names the console knows for ids (organizations, projects, people); unknown ids are shown as they are. */
export interface Directory {
  /** The signed-in person's id: their own wallet reads "You". */
  me?: string | undefined;
  organizations: ReadonlyMap<string, string>;
  projects: ReadonlyMap<string, string>;
  /** Project id -> its organization's id. */
  projectOrganizations: ReadonlyMap<string, string>;
  users: ReadonlyMap<string, string>;
}

export const EMPTY_DIRECTORY: Directory = {
  organizations: new Map(),
  projects: new Map(),
  projectOrganizations: new Map(),
  users: new Map(),
};

/** Whose wallet it is, in words: "You", "alice@example.com", "Vision", "Acme", "Platform". */
export function walletName(w: Pick<Wallet, "owner" | "display_name">, d: Directory): string {
  if (w.display_name) return w.display_name;
  const id = w.owner.id;
  switch (w.owner.kind) {
    case "user":
      return id === d.me ? "You" : (d.users.get(id) ?? id);
    case "project":
      return d.projects.get(id) ?? id;
    case "organization":
      return d.organizations.get(id) ?? id;
    case "system":
      return "Platform (issues credits)";
  }
}

/** One line for a select or a table cell: "Vision (project, Acme)". */
export function walletLine(w: Pick<Wallet, "owner" | "display_name" | "organization_id">, d: Directory): string {
  const kind = OWNER_KIND_LABEL[w.owner.kind].toLowerCase();
  const org = w.organization_id && w.owner.kind !== "organization" ? d.organizations.get(w.organization_id) : undefined;
  return `${walletName(w, d)} (${kind}${org ? `, ${org}` : ""})`;
}

/** A wallet page's heading: "Your wallet", else "Vision (project, Acme)". */
export function walletTitle(w: Pick<Wallet, "owner" | "display_name" | "organization_id">, d: Directory): string {
  return w.owner.kind === "user" && w.owner.id === d.me && !w.display_name ? "Your wallet" : walletLine(w, d);
}

/** Administers something whose wallets pay others: the allocations page and the decide buttons. */
export function managesCredits(me: MeForCredits): boolean {
  return me.isSuperAdmin || me.memberships.some((m) => m.role === "org_admin" || m.role === "project_admin");
}

/**
 * Probably manages (may pay from) this wallet, by the rules of docs/dev/billing.md: the API decides, this
 * only keeps impossible choices out of the forms. A person's wallet is managed by the admins of a project
 * the person belongs to; the console cannot see project memberships of others, so it counts a project
 * admin of the wallet's organization as one.
 */
export function canManageWallet(w: Pick<Wallet, "owner" | "organization_id">, me: MeForCredits): boolean {
  if (me.isSuperAdmin) return true;
  if (w.owner.kind === "system") return false;
  const orgAdmin = me.memberships.some(
    (m) => m.role === "org_admin" && m.project_id === null && m.organization_id === w.organization_id,
  );
  if (orgAdmin) return true;
  if (w.owner.kind === "project")
    return me.memberships.some((m) => m.role === "project_admin" && m.project_id === w.owner.id);
  if (w.owner.kind === "user")
    return me.memberships.some((m) => m.role === "project_admin" && m.organization_id === w.organization_id);
  return false;
}

// ---- Ledger and list filters (kept in the URL: deep links, back, reload keep them) ----

export const LEDGER_KINDS = ["grant", "allocation", "request", "refill", "charge", "reversal"] as const;
export type LedgerKind = (typeof LEDGER_KINDS)[number];

export const KIND_LABEL: Record<LedgerKind, string> = {
  grant: "Grant",
  allocation: "Allocation",
  request: "Approved request",
  refill: "Refill",
  charge: "Usage charge",
  reversal: "Reversal",
};

export const REQUEST_STATUSES = ["pending", "approved", "partially_approved", "denied", "cancelled"] as const;
export type RequestStatus = CreditRequest["status"];

export const STATUS_LABEL: Record<RequestStatus, string> = {
  pending: "Pending",
  approved: "Approved",
  partially_approved: "Partly approved",
  denied: "Denied",
  cancelled: "Cancelled",
};

export const STATUS_TONE: Record<RequestStatus, string> = {
  pending: "tone-warn",
  approved: "tone-ok",
  partially_approved: "tone-ok",
  denied: "tone-bad",
  cancelled: "tone-muted",
};

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

function validDay(s: string | null): string {
  if (!s) return "";
  const m = DAY.exec(s);
  if (!m) return "";
  const d = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return d.getFullYear() === Number(m[1]) && d.getMonth() === Number(m[2]) - 1 && d.getDate() === Number(m[3]) ? s : "";
}

function pageOf(q: URLSearchParams): number {
  const n = Number(q.get("page"));
  return Number.isInteger(n) && n > 0 ? n : 1;
}

function toQuery(entries: Record<string, string | number>, defaults: Record<string, string | number>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(entries)) if (v !== "" && v !== defaults[k]) q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : "";
}

export interface LedgerFilter {
  kind: LedgerKind | "";
  /** Local calendar days, YYYY-MM-DD, both included; "" for open. */
  from: string;
  to: string;
  page: number;
}

export function ledgerFilterFromQuery(q: URLSearchParams): LedgerFilter {
  const kind = q.get("kind") ?? "";
  return {
    kind: (LEDGER_KINDS as readonly string[]).includes(kind) ? (kind as LedgerKind) : "",
    from: validDay(q.get("from")),
    to: validDay(q.get("to")),
    page: pageOf(q),
  };
}

export function queryFromLedgerFilter(f: LedgerFilter): string {
  return toQuery({ kind: f.kind, from: f.from, to: f.to, page: f.page }, { page: 1 });
}

/**
 * The API's instants for a range of local days: `from` at the start of its day (inclusive), `to` at the
 * start of the day after (the API's `to` is exclusive), so "from 3 May to 3 May" is all of 3 May.
 */
export function ledgerRange(f: Pick<LedgerFilter, "from" | "to">): { from?: string; to?: string } {
  const start = (day: string, plus: number) => {
    const m = DAY.exec(day);
    if (!m) return undefined;
    return new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + plus).toISOString();
  };
  const from = f.from ? start(f.from, 0) : undefined;
  const to = f.to ? start(f.to, 1) : undefined;
  return { ...(from ? { from } : {}), ...(to ? { to } : {}) };
}

/** The ledger API's query for a filter (also the CSV export's, without paging). */
export function ledgerQuery(f: LedgerFilter): { kind?: string; from?: string; to?: string } {
  return { ...(f.kind ? { kind: f.kind } : {}), ...ledgerRange(f) };
}

export interface WalletsFilter {
  organization: string;
  kind: Wallet["owner"]["kind"] | "";
  page: number;
}

export function walletsFilterFromQuery(q: URLSearchParams): WalletsFilter {
  const kind = q.get("kind") ?? "";
  return {
    organization: q.get("org") ?? "",
    kind: Object.hasOwn(OWNER_KIND_LABEL, kind) ? (kind as WalletsFilter["kind"]) : "",
    page: pageOf(q),
  };
}

export function queryFromWalletsFilter(f: WalletsFilter): string {
  return toQuery({ org: f.organization, kind: f.kind, page: f.page }, { page: 1 });
}

export interface RequestsFilter {
  status: RequestStatus | "" | "any";
  page: number;
}

/** Managers land on what waits for them (pending); members on all of theirs. */
export function requestsFilterFromQuery(q: URLSearchParams, manager: boolean): RequestsFilter {
  const s = q.get("status") ?? "";
  const status =
    (REQUEST_STATUSES as readonly string[]).includes(s) || s === "any" ? (s as RequestsFilter["status"]) : "";
  return { status: status === "" ? (manager ? "pending" : "any") : status, page: pageOf(q) };
}

export function queryFromRequestsFilter(f: RequestsFilter, manager: boolean): string {
  return toQuery({ status: f.status, page: f.page }, { status: manager ? "pending" : "any", page: 1 });
}

/** What a ledger line says beyond its kind: the reason, or for a charge the usage it billed. */
export function ledgerDetail(l: LedgerLine): string {
  if (l.kind === "charge" && l.usage) {
    const ms = l.usage.milliseconds ? Number(l.usage.milliseconds) : undefined;
    const secs = ms !== undefined && Number.isFinite(ms) ? `${Math.round(ms / 1000)} s of use` : "usage";
    const rate = l.usage.rate_per_hour ? ` at ${formatCredits(l.usage.rate_per_hour)} credits/h` : "";
    return `${secs}${rate}`;
  }
  return l.reason ?? "";
}
