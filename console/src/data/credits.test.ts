import { describe, expect, it } from "vitest";
import type { MembershipOfUser, Wallet } from "../api/openapi.gen.ts";
import {
  canManageWallet,
  creditsText,
  type Directory,
  formatCredits,
  formatSignedCredits,
  ledgerDetail,
  ledgerFilterFromQuery,
  ledgerQuery,
  managesCredits,
  parseCredits,
  pickHeaderWallet,
  queryFromLedgerFilter,
  queryFromRequestsFilter,
  requestsFilterFromQuery,
  unitsToInput,
  walletLine,
  walletName,
  walletsFilterFromQuery,
  walletTitle,
} from "./credits.ts";

function aWallet(over: Partial<Wallet> & { owner: Wallet["owner"] }): Wallet {
  return {
    id: `wal_${over.owner.kind}_${over.owner.id}`,
    organization_id: "org_a",
    display_name: null,
    balance: "0",
    spendable: "0",
    limits: { overdraft: "0", max_spend_per_day: null, max_spend_per_month: null },
    last_sequence: "0",
    resource: null,
    created_at: "2026-01-01T00:00:00Z",
    updated_at: "2026-01-01T00:00:00Z",
    ...over,
  };
}

const membership = (
  organization_id: string,
  role: MembershipOfUser["role"],
  project_id: string | null = null,
): MembershipOfUser => ({
  organization_id,
  project_id,
  role,
});

describe("credit amounts", () => {
  it("are shown from integer minor units exactly, however large, with no float in between", () => {
    expect(formatCredits("25500000")).toBe("25.50");
    expect(formatCredits("1")).toBe("0.000001");
    expect(formatCredits("123456789012345678")).toBe("123,456,789,012.345678");
    // 2^53 + 1 minor units: a float would round this to ...992.
    expect(formatCredits("9007199254740993")).toBe("9,007,199,254.740993");
    expect(formatCredits(0n)).toBe("0.00");
    expect(formatSignedCredits("40000000")).toBe("+40.00");
    expect(formatSignedCredits("-40000000")).toBe("−40.00");
    expect(formatSignedCredits("0")).toBe("0.00");
    expect(creditsText("1000000000")).toBe("1,000.00 credits");
  });

  it("typed by a person become exact minor units, and anything unclear is refused with a reason", () => {
    expect(parseCredits("25.5")).toEqual({ ok: true, units: "25500000" });
    expect(parseCredits(" 40 ")).toEqual({ ok: true, units: "40000000" });
    expect(parseCredits(".5")).toEqual({ ok: true, units: "500000" });
    expect(parseCredits("0.000001")).toEqual({ ok: true, units: "1" });
    expect(parseCredits("999999999999.999999")).toEqual({ ok: true, units: "999999999999999999" });
    expect(parseCredits("0.1")).toEqual({ ok: true, units: "100000" });
    for (const bad of ["", "0", "0.0000001", "-5", "1e6", "1,5", "1.2.3", "abc", ".", "1000000000000"])
      expect(parseCredits(bad).ok, bad).toBe(false);
    expect(parseCredits("0.0000001")).toMatchObject({ problem: expect.stringMatching(/six decimals/) });
  });

  it("go back into a form as plain decimals", () => {
    expect(unitsToInput("40000000")).toBe("40");
    expect(unitsToInput("12500000")).toBe("12.5");
    expect(unitsToInput("1")).toBe("0.000001");
    for (const s of ["7", "1000000", "123456789", "999999999999999999"])
      expect(parseCredits(unitsToInput(s))).toEqual({ ok: true, units: s });
  });
});

describe("wallets", () => {
  const d: Directory = {
    me: "usr_me",
    organizations: new Map([["org_a", "Acme"]]),
    projects: new Map([["prj_v", "Vision"]]),
    projectOrganizations: new Map([["prj_v", "org_a"]]),
    users: new Map([["usr_b", "bob@example.test"]]),
  };

  it("are named after their owners, and the signed-in person's reads You", () => {
    expect(walletName(aWallet({ owner: { kind: "user", id: "usr_me" } }), d)).toBe("You");
    expect(walletName(aWallet({ owner: { kind: "user", id: "usr_b" } }), d)).toBe("bob@example.test");
    expect(walletName(aWallet({ owner: { kind: "user", id: "usr_x" } }), d)).toBe("usr_x");
    expect(walletName(aWallet({ owner: { kind: "project", id: "prj_v" }, display_name: "GPU pool" }), d)).toBe(
      "GPU pool",
    );
    expect(walletLine(aWallet({ owner: { kind: "project", id: "prj_v" } }), d)).toBe("Vision (project, Acme)");
    expect(walletLine(aWallet({ owner: { kind: "organization", id: "org_a" } }), d)).toBe("Acme (organization)");
    expect(walletTitle(aWallet({ owner: { kind: "user", id: "usr_me" } }), d)).toBe("Your wallet");
    expect(walletTitle(aWallet({ owner: { kind: "user", id: "usr_b" } }), d)).toBe("bob@example.test (person, Acme)");
  });

  it("the header shows the person's own wallet first, else the most relevant one they see", () => {
    const me = {
      userId: "usr_me",
      isSuperAdmin: false,
      memberships: [
        membership("org_b", "member"),
        membership("org_a", "member"),
        membership("org_a", "member", "prj_v"),
      ],
    };
    const ownA = aWallet({ owner: { kind: "user", id: "usr_me" }, organization_id: "org_a" });
    const ownB = aWallet({ owner: { kind: "user", id: "usr_me" }, organization_id: "org_b" });
    const project = aWallet({ owner: { kind: "project", id: "prj_v" } });
    const org = aWallet({ owner: { kind: "organization", id: "org_a" } });
    const someoneElse = aWallet({ owner: { kind: "user", id: "usr_b" } });
    expect(pickHeaderWallet([org, project, ownA, ownB], me)).toEqual({ wallet: ownB, own: true });
    expect(pickHeaderWallet([org, someoneElse, project], me)).toEqual({ wallet: project, own: false });
    expect(pickHeaderWallet([someoneElse, org], me)).toEqual({ wallet: org, own: false });
    expect(pickHeaderWallet([someoneElse], me)).toBeUndefined();
    const system = aWallet({ owner: { kind: "system", id: "system" }, organization_id: null });
    const superAdmin = { userId: "usr_root", isSuperAdmin: true, memberships: [] };
    expect(pickHeaderWallet([org, someoneElse, system], superAdmin)).toEqual({ wallet: system, own: false });
  });

  it("are managed by the organization's admins and a project's admins; the forms offer only those", () => {
    const orgAdmin = { userId: "u", isSuperAdmin: false, memberships: [membership("org_a", "org_admin")] };
    const projectAdmin = {
      userId: "u",
      isSuperAdmin: false,
      memberships: [membership("org_a", "member"), membership("org_a", "project_admin", "prj_v")],
    };
    const member = { userId: "u", isSuperAdmin: false, memberships: [membership("org_a", "member")] };
    const org = aWallet({ owner: { kind: "organization", id: "org_a" } });
    const project = aWallet({ owner: { kind: "project", id: "prj_v" } });
    const person = aWallet({ owner: { kind: "user", id: "usr_b" } });
    const elsewhere = aWallet({ owner: { kind: "organization", id: "org_b" }, organization_id: "org_b" });
    expect([org, project, person, elsewhere].map((w) => canManageWallet(w, orgAdmin))).toEqual([
      true,
      true,
      true,
      false,
    ]);
    expect([org, project, person].map((w) => canManageWallet(w, projectAdmin))).toEqual([false, true, true]);
    expect([org, project, person].map((w) => canManageWallet(w, member))).toEqual([false, false, false]);
    expect([orgAdmin, projectAdmin, member].map(managesCredits)).toEqual([true, true, false]);
  });
});

describe("the credits pages' filters", () => {
  it("live in the URL and ignore what they do not know", () => {
    const f = ledgerFilterFromQuery(new URLSearchParams("kind=request&from=2026-01-15&to=2026-02-30&page=2"));
    expect(f).toEqual({ kind: "request", from: "2026-01-15", to: "", page: 2 });
    expect(queryFromLedgerFilter({ ...f, page: 1 })).toBe("?kind=request&from=2026-01-15");
    expect(ledgerFilterFromQuery(new URLSearchParams("kind=bogus&page=-1"))).toEqual({
      kind: "",
      from: "",
      to: "",
      page: 1,
    });
    expect(walletsFilterFromQuery(new URLSearchParams("kind=toString&org=org_a"))).toEqual({
      organization: "org_a",
      kind: "",
      page: 1,
    });
  });

  it("ask the ledger for whole local days, the last one included", () => {
    const q = ledgerQuery({ kind: "", from: "2026-01-15", to: "2026-01-15", page: 1 });
    const from = new Date(q.from as string);
    expect([from.getFullYear(), from.getMonth(), from.getDate(), from.getHours(), from.getMinutes()]).toEqual([
      2026, 0, 15, 0, 0,
    ]);
    expect(Date.parse(q.to as string) - from.getTime()).toBe(24 * 3600 * 1000);
    expect(ledgerQuery({ kind: "charge", from: "", to: "", page: 3 })).toEqual({ kind: "charge" });
  });

  it("land managers on the pending requests and members on all of theirs", () => {
    expect(requestsFilterFromQuery(new URLSearchParams(""), true).status).toBe("pending");
    expect(requestsFilterFromQuery(new URLSearchParams(""), false).status).toBe("any");
    expect(requestsFilterFromQuery(new URLSearchParams("status=denied"), false).status).toBe("denied");
    expect(queryFromRequestsFilter({ status: "pending", page: 1 }, true)).toBe("");
    expect(queryFromRequestsFilter({ status: "any", page: 1 }, true)).toBe("?status=any");
  });

  it("describe a charge by the usage it billed", () => {
    expect(
      ledgerDetail({
        sequence: "9",
        transaction_id: "txn_1",
        kind: "charge",
        amount: "-66666",
        balance_after: "1000",
        at: "2026-01-01T00:00:00Z",
        reason: null,
        actor: { kind: "system", id: null },
        request_id: null,
        session_id: "ses_1",
        usage: { cluster_id: "c", sample_id: "s", milliseconds: "60000", rate_per_hour: "4000000" },
        reverses: null,
      }),
    ).toBe("60 s of use at 4.00 credits/h");
  });
});
