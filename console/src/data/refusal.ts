// Why a session cannot start now, in plain words, from the cost preview's `refusal` (the same error
// object create would answer: code, message, details; docs/dev/billing.md, At the door). The wizard shows
// this next to its disabled Create button, with what the person can do about it.
import { formatCredits } from "./format.ts";

export interface Refusal {
  code: string;
  message: string;
  details: Record<string, unknown>;
}

/** What the person can do: ask for credits, free up a slot, pick another offering, or ask an admin. */
export type RefusalRemedy =
  | { kind: "ask-credits"; label: string; href: string }
  | { kind: "free-a-slot"; label: string; href: string }
  | { kind: "other-offering"; label: string }
  | { kind: "borrow"; label: string }
  | { kind: "ask-admin"; label: string };

export interface RefusalText {
  /** One short line: what stops the session. */
  headline: string;
  /** The limit in plain words ("Your credits cover 4 minutes; a session needs 10 minutes at 4 credits/h."). */
  explanation: string;
  remedy: RefusalRemedy;
}

export interface RefusalContext {
  /** Where an "ask for credits" link points: the organization the session would belong to. */
  organizationId?: string | null;
  /** The preview's hourly rate (minor units), for refusals whose details do not carry it. */
  hourlyRate?: string;
  /** The preview's cost for the chosen duration (minor units): what to suggest asking for. */
  cost?: string;
  /** For times such as "resets at …"; defaults to the browser's locale. */
  formatTime?: (iso: string) => string;
}

const str = (v: unknown): string | undefined =>
  typeof v === "string" || typeof v === "number" ? String(v) : undefined;
const big = (v: unknown): bigint | undefined => {
  const s = str(v);
  if (s === undefined || !/^-?\d+$/.test(s)) return undefined;
  return BigInt(s);
};
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

/** "4" for 4,000,000 minor units, "0.67" for 666,667: whole credits lose their ".00". */
export function shortCredits(units: bigint | string): string {
  return formatCredits(units).replace(/\.00$/, "");
}

/** "10 minutes", "1 minute", "1 hour 30 minutes", "less than a minute". */
export function spokenDuration(seconds: number | bigint): string {
  const s = Number(seconds);
  if (!Number.isFinite(s) || s < 60) return "less than a minute";
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const part = (n: number, unit: string) => `${n} ${unit}${n === 1 ? "" : "s"}`;
  if (h === 0) return part(m, "minute");
  return m === 0 ? part(h, "hour") : `${part(h, "hour")} ${part(m, "minute")}`;
}

/** Whole credits, rounded up, at least one: a friendly amount to ask for. */
function wholeCreditsUp(units: bigint): string {
  const scale = 1_000_000n;
  const whole = units <= 0n ? 1n : (units + scale - 1n) / scale;
  return whole.toString();
}

function askCredits(ctx: RefusalContext, amountUnits: bigint | undefined): RefusalRemedy {
  const q = new URLSearchParams();
  if (ctx.organizationId) q.set("org", ctx.organizationId);
  if (amountUnits !== undefined) q.set("amount", wholeCreditsUp(amountUnits));
  const qs = q.toString();
  return { kind: "ask-credits", label: "Ask for credits", href: `/credits/requests${qs ? `?${qs}` : ""}` };
}

const ASK_ADMIN: RefusalRemedy = { kind: "ask-admin", label: "Ask an administrator of your organization" };
const FREE_A_SLOT: RefusalRemedy = {
  kind: "free-a-slot",
  label: "Pause or terminate one of your sessions",
  href: "/sessions",
};

/** The refusal in plain words, with what to do about it. Unknown codes and limits keep the API's message. */
export function describeRefusal(refusal: Refusal, ctx: RefusalContext = {}): RefusalText {
  const d = refusal.details ?? {};
  const when = (iso: unknown) => {
    const s = str(iso);
    if (!s) return undefined;
    return ctx.formatTime ? ctx.formatTime(s) : new Date(s).toLocaleString();
  };
  if (refusal.code === "gpu_model_unavailable") {
    const models = Array.isArray(d.reported_models) ? d.reported_models.map(String) : [];
    return {
      headline: "No cluster has this GPU model",
      explanation: models.length
        ? `The fleet offers ${models.join(", ")} now; choose an offering with one of them.`
        : "No cluster of the fleet reports this GPU model now; choose another offering.",
      remedy: { kind: "other-offering", label: "Choose another offering" },
    };
  }
  if (refusal.code !== "quota_exceeded")
    return { headline: "This session cannot start now", explanation: refusal.message, remedy: ASK_ADMIN };

  const limit = str(d.limit);
  const value = big(d.value);
  const required = big(d.required);
  const rate = big(d.hourly_rate);
  const reserved = big(d.reserved) ?? 0n;
  const minimumRun = num(d.minimum_run_seconds) ?? 600;
  const needs = (perHour: bigint | undefined) =>
    perHour && perHour > 0n
      ? `a session needs ${spokenDuration(minimumRun)} at ${shortCredits(perHour)} credits/h`
      : required !== undefined
        ? `a session needs ${shortCredits(required)} credits to run ${spokenDuration(minimumRun)}`
        : `a session needs credits for ${spokenDuration(minimumRun)}`;
  // Only the credits refusal carries the rate; the preview knows it for the others.
  const perHour = rate ?? big(ctx.hourlyRate);

  switch (limit) {
    case "credits": {
      const usable = value !== undefined ? value - reserved : undefined;
      const covers =
        usable === undefined || !perHour
          ? undefined
          : usable <= 0n
            ? "Your credits are used up"
            : `Your credits cover ${spokenDuration((usable * 3600n) / perHour)}`;
      const sessions = num(d.sessions_let_in) ?? 0;
      const owed =
        reserved > 0n && sessions > 0
          ? ` once ${shortCredits(reserved)} credits are kept for the ${sessions === 1 ? "session" : `${sessions} sessions`} already started in your organization`
          : "";
      // Enough for the chosen duration, not only the minimum run.
      const wanted = big(ctx.cost);
      const target = wanted !== undefined && (required === undefined || wanted > required) ? wanted : required;
      const gap = target !== undefined ? target - (usable !== undefined && usable > 0n ? usable : 0n) : undefined;
      return {
        headline: "Not enough credits to start",
        explanation: `${covers ?? "Your credits do not cover the minimum run"}${owed}; ${needs(perHour)}.`,
        remedy: askCredits(ctx, gap),
      };
    }
    case "maxSpendPerDay":
    case "maxSpendPerMonth": {
      const per = limit === "maxSpendPerDay" ? "daily" : "monthly";
      const spent = big(d.spent);
      const available = big(d.available);
      const resets = when(d.resets_at);
      const whose = str(d.owner_kind) === "user" ? "Your wallet's" : `The ${str(d.owner_kind) ?? "wallet"} wallet's`;
      return {
        headline: `A ${per} spending limit is reached`,
        explanation:
          `${whose} ${per} limit is ${value !== undefined ? shortCredits(value) : "set"} credits` +
          `${spent !== undefined ? ` and ${shortCredits(spent)} are spent` : ""}` +
          `${available !== undefined ? `; ${shortCredits(available)} credits are left within it` : ""}; ${needs(perHour)}.` +
          `${resets ? ` The limit resets ${resets}.` : ""}`,
        remedy: { kind: "ask-admin", label: `Wait for the reset, or ask an administrator to raise the ${per} limit` },
      };
    }
    case "organizationBudget": {
      const spent = big(d.spent);
      const period = str(d.period) ?? "period";
      const left = value !== undefined && spent !== undefined ? value - spent - reserved : undefined;
      const resets = when(d.resets_at);
      return {
        headline: "Your organization's budget is spent",
        explanation:
          `The organization's ${period} budget${left !== undefined ? ` has ${shortCredits(left < 0n ? 0n : left)} credits left` : " is spent"}; ${needs(perHour)}.` +
          `${resets ? ` It resets ${resets}.` : ""}`,
        remedy: { kind: "ask-admin", label: "Ask an administrator of your organization to raise the budget" },
      };
    }
    case "maxConcurrentSessionsPerUser": {
      const max = num(d.value);
      const current = num(d.current);
      return {
        headline: "You have as many sessions as allowed",
        explanation: `You have ${current ?? "the most"} running or waiting sessions${max !== undefined ? ` and may have at most ${max}` : ""}.`,
        remedy: FREE_A_SLOT,
      };
    }
    case "maxGpusPerUser":
    case "maxGpusPerProject":
    case "maxGpusPerOrganization": {
      const max = num(d.value);
      const current = num(d.current) ?? 0;
      const requested = num(d.requested) ?? 1;
      const who =
        limit === "maxGpusPerUser"
          ? "You use"
          : limit === "maxGpusPerProject"
            ? "Your project uses"
            : "Your organization uses";
      return {
        headline: "The GPU limit is reached",
        explanation: `${who} ${current} of ${max ?? "its"} GPUs; this session needs ${requested} more.`,
        remedy: limit === "maxGpusPerUser" ? FREE_A_SLOT : ASK_ADMIN,
      };
    }
    case "allowedOfferings":
      return {
        headline: "This offering is not allowed for you",
        explanation: `Your resource policy does not allow ${str(d.requested) ?? "this offering"}.`,
        remedy: { kind: "other-offering", label: "Choose another offering" },
      };
    case "guaranteed_gpus": {
      // docs/dev/fair-share.md: beyond the guarantee, the person may opt in to borrowed capacity.
      const scope = str(d.scope)?.startsWith("project") ? "project's" : "organization's";
      return {
        headline: "Your guaranteed GPUs are in use",
        explanation: `Your ${scope} guarantee is ${num(d.value) ?? 0} ${str(d.gpu_model) ?? "GPUs"} and ${num(d.current) ?? 0} are in guaranteed use.`,
        remedy: { kind: "borrow", label: "Choose Borrowed under Capacity to use idle GPUs beyond it" },
      };
    }
    case "borrowing_limit_gpus":
      return {
        headline: "The borrowing limit is reached",
        explanation: `Your ${str(d.scope)?.startsWith("project") ? "project" : "organization"} may borrow at most ${num(d.value) ?? 0} ${str(d.gpu_model) ?? "GPUs"} beyond its guarantee and borrows ${num(d.current) ?? 0}.`,
        remedy: ASK_ADMIN,
      };
    default:
      return { headline: "A limit stops this session", explanation: refusal.message, remedy: ASK_ADMIN };
  }
}
