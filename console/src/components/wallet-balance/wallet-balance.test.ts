// @vitest-environment happy-dom
// The header's balance over a stubbed API: the person's own wallet, the most relevant other one, none,
// a failure, and a reload after credits moved in this tab.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { UserDetail, Wallet } from "../../api/openapi.gen.ts";
import { announceCreditsChanged } from "../../app/credits.ts";
import "./index.ts";
import type { BerthWalletBalance } from "./berth-wallet-balance.ts";

const ME: UserDetail = {
  id: "usr_me",
  email: "me@example.test",
  display_name: null,
  is_super_admin: false,
  must_change_password: false,
  disabled: false,
  last_login_at: null,
  created_at: "2026-01-01T00:00:00Z",
  updated_at: "2026-01-01T00:00:00Z",
  memberships: [{ organization_id: "org_a", project_id: null, role: "org_admin" }],
};

function aWallet(kind: Wallet["owner"]["kind"], ownerId: string, balance: string): Wallet {
  return {
    id: `wal_${ownerId}`,
    organization_id: "org_a",
    owner: { kind, id: ownerId },
    display_name: null,
    balance,
    spendable: balance.startsWith("-") ? "0" : balance,
    limits: { overdraft: "0", max_spend_per_day: null, max_spend_per_month: null },
    last_sequence: "1",
    resource: null,
    created_at: "2026-01-01T00:00:00Z",
    updated_at: "2026-01-01T00:00:00Z",
  };
}

/** Answers GET /api/v1/credits/wallets: person wallets for ?owner_kind=user, everything otherwise. */
function serve(wallets: Wallet[] | Error): ReturnType<typeof vi.fn> {
  const f = vi.fn(async (url: string) => {
    if (wallets instanceof Error)
      return new Response(
        JSON.stringify({ error: { code: "internal", message: wallets.message, request_id: "req_x" } }),
        {
          status: 500,
          headers: { "Content-Type": "application/json" },
        },
      );
    const people = new URL(url, "http://x").searchParams.get("owner_kind") === "user";
    const data = people ? wallets.filter((w) => w.owner.kind === "user") : wallets;
    return new Response(JSON.stringify({ data, pagination: { page: 1, size: 100, total: data.length } }), {
      headers: { "Content-Type": "application/json" },
    });
  });
  vi.stubGlobal("fetch", f);
  return f;
}

async function mount(): Promise<BerthWalletBalance> {
  const el = document.createElement("berth-wallet-balance");
  el.userId = ME.id;
  el.me = ME;
  document.body.append(el);
  await settle(el);
  return el;
}
const settle = async (el: BerthWalletBalance) => {
  for (let i = 0; i < 6; i++) {
    await new Promise((r) => setTimeout(r, 0));
    await el.updateComplete;
  }
};
const link = (el: BerthWalletBalance) => el.shadowRoot?.querySelector("a");
/** The link's words as a reader hears them (text nodes joined by spaces). */
const text = (el: BerthWalletBalance) => {
  const a = link(el);
  if (!a) return "";
  const walker = document.createTreeWalker(a, 4);
  const parts: string[] = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) parts.push(n.textContent ?? "");
  return parts.join(" ").replace(/\s+/g, " ").replace(/ :/g, ":").trim();
};

beforeEach(async () => {
  const { auth } = await import("../../app/context.ts");
  auth.accept({
    access_token: "t",
    token_type: "bearer",
    expires_in: 900,
    must_change_password: false,
    user: { id: ME.id, email: ME.email },
  });
  auth.setMe(ME);
});
afterEach(() => {
  document.body.innerHTML = "";
  vi.unstubAllGlobals();
});

describe("the header's balance", () => {
  it("shows the person's own wallet and links to its ledger", async () => {
    serve([aWallet("organization", "org_a", "1000000000"), aWallet("user", "usr_me", "25500000")]);
    const el = await mount();
    expect(text(el)).toBe("Your balance: 25.50 credits");
    expect(link(el)?.getAttribute("href")).toBe("/credits/wallets/wal_usr_me");
    expect(link(el)?.dataset.own).toBe("true");
  });

  it("falls back to the organization's wallet, saying whose it is", async () => {
    serve([aWallet("organization", "org_a", "-2000000"), aWallet("user", "usr_other", "5")]);
    const el = await mount();
    expect(text(el)).toBe("Org Organization wallet: −2.00 credits");
    expect(link(el)?.dataset.own).toBe("false");
    expect(el.shadowRoot?.querySelector(".amount")?.classList.contains("negative")).toBe(true);
  });

  it("with no wallet at all shows zero and leads to asking for credits", async () => {
    serve([]);
    const el = await mount();
    expect(text(el)).toBe("Your balance: 0.00 credits");
    expect(link(el)?.getAttribute("href")).toBe("/credits/requests");
  });

  it("never disappears on a failure: it says the balance is unavailable and links to the credits page", async () => {
    serve(new Error("database is down"));
    const el = await mount();
    expect(text(el)).toBe("Credits unavailable");
    expect(link(el)?.getAttribute("title")).toBe("database is down");
  });

  it("reloads when credits moved in this tab", async () => {
    const fetch = serve([aWallet("user", "usr_me", "1000000")]);
    const el = await mount();
    expect(text(el)).toBe("Your balance: 1.00 credits");
    serve([aWallet("user", "usr_me", "3000000")]);
    announceCreditsChanged();
    await settle(el);
    expect(text(el)).toBe("Your balance: 3.00 credits");
    expect(fetch).toHaveBeenCalled();
  });
});
