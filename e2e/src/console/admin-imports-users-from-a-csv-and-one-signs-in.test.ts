// Journey: an organization's admin imports people from a spreadsheet. The dry run (a job, run by the
// worker's import loop beside the API) shows each row's outcome (a formula cell and a row naming another
// organization are refused, the rest would be created); the import makes the accounts, pays the welcome
// credit and holds the temporary passwords until the admin shows them, once (a second fetch is refused);
// the results file downloads with the formula neutralised; one new person signs in with their temporary
// password and is asked for their own. axe-core checks the page in each state.
import { readFile } from "node:fs/promises";
import { grantToOrganization, type IdentityTestApi, startIdentityTestApi, type TestUser } from "@berth/api/testing";
import { ensureConsoleBuilt } from "@berth/console";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { apiAs, refusalOf } from "../api-client.ts";
import { closeBrowser, expectAccessible, launchBrowser, newContext, Screenshots } from "./browser.ts";
import { LoginPage } from "./pages/login-page.ts";
import { PasswordPage } from "./pages/password-page.ts";
import { UserImportPage } from "./pages/user-import-page.ts";
import { Visitors } from "./pages/visitors.ts";

// Signing in costs an argon2id hash per person; on a shared, loaded machine a step can take over a minute.
vi.setConfig({ testTimeout: 180_000 });

describe("an organization admin imports users from a CSV", () => {
  let t: IdentityTestApi;
  let browser: Browser;
  const people = new Visitors(
    () => browser,
    () => t.api.url,
  );
  const shots = new Screenshots("user-import");
  let admin: TestUser;
  let page: Page;
  let imports: UserImportPage;
  const stamp = Date.now().toString(36);
  const ada = `ada-${stamp}@lab.test`;
  const bo = `bo-${stamp}@lab.test`;
  let file = "";
  let temporary = "";

  beforeAll(async () => {
    ensureConsoleBuilt();
    t = await startIdentityTestApi({ userImports: true });
    const org = await t.anOrganization("Vision Lab");
    const other = await t.anOrganization("Other Lab");
    await t.aProject(org.id, "Segmentation");
    admin = await t.aUser({ email: `admin-${stamp}@lab.test` });
    await t.member(admin, org.id, null, "org_admin");
    await grantToOrganization(t.database.db, {
      organizationId: org.id,
      amount: 100_000_000n,
      actorKind: "system",
      actorId: null,
      reason: "journey",
      at: t.clock.now(),
    });
    await t.database.db("organization_welcome_credits").insert({ organization_id: org.id, amount: "5000000" });
    file = [
      "email,name,organization,project,role,initial_credits",
      `${ada},Ada Lovelace,${org.slug},Segmentation,project_admin,10`,
      `${bo},Bo Chen,${org.slug},,member,`,
      `eve-${stamp}@lab.test,=cmd|' /C calc'!A0,${org.slug},,member,`,
      `mal-${stamp}@lab.test,Mal,${other.slug},,member,`,
    ].join("\r\n");
    browser = await launchBrowser();
  });
  afterEach(async (ctx) => shots.onFailure(people.current, ctx));
  afterAll(async () => {
    await people.closeAll();
    await closeBrowser(browser);
    await t?.stop();
  });

  it("sees each row's outcome in a dry run", async () => {
    page = await people.signIn(admin);
    imports = new UserImportPage(page);
    await imports.openFromMenu();
    await imports.choose("people.csv", file);
    await imports.dryRun();
    expect(await imports.outcomes()).toEqual([
      { outcome: "create", code: "" },
      { outcome: "create", code: "" },
      { outcome: "error", code: "formula_injection" },
      { outcome: "error", code: "unknown_organization" },
    ]);
    await expect
      .poll(() => imports.counts().textContent())
      .toContain("2 to create, 0 to update, 0 unchanged, 2 with errors");
    expect(await t.database.db("users").whereIn("email", [ada, bo])).toEqual([]);
    await expectAccessible(page, "dry run");
    await shots.take(page, "dry-run");
  });

  it("imports, sees the temporary passwords once and downloads the results", async () => {
    await imports.importRows();
    expect(await imports.counts().textContent()).toContain("2 created, 0 updated, 0 unchanged, 2 with errors");
    await expectAccessible(page, "passwords held");
    await shots.take(page, "passwords-held");
    await imports.revealPasswords();
    const passwords = await imports.passwords();
    expect([...passwords.keys()]).toEqual([ada, bo]);
    expect(await imports.revealButton().count()).toBe(0);
    // Given once: Berth erased them as it showed them.
    const job = await t.database.db("user_imports").where({ actor_id: admin.id, dry_run: false }).first("id");
    const again = await refusalOf(
      apiAs(t.api.url, await t.tokenFor(admin.id)).call("takeUserImportPasswords", { params: { importId: job.id } }),
    );
    expect(again.status).toBe(410);
    expect(again.code).toBe("import_passwords_gone");
    await expectAccessible(page, "imported");
    await shots.take(page, "imported");
    const download = await imports.downloadResults();
    const text = await readFile((await download.path()) as string, "utf8");
    expect(text).toContain(`${ada},Ada Lovelace`);
    expect(text).toContain(",'=cmd|' /C calc'!A0,");
    expect(text).not.toMatch(/(^|,)=/m);
    const adaRow = await t.database.db("users").where({ email: ada }).first();
    const wallet = await t.database.db("wallets").where({ owner_kind: "user", owner_id: adaRow.id }).first();
    expect(wallet.balance).toBe("15000000"); // 10 initial credits + the 5-credit welcome
    // The same file again changes nothing.
    await imports.choose("people.csv", file);
    await imports.dryRun();
    await expect
      .poll(() => imports.counts().textContent())
      .toContain("0 to create, 0 to update, 2 unchanged, 2 with errors");
    temporary = passwords.get(ada) ?? "";
  });

  it("lets a new person sign in with the temporary password and asks for their own", async () => {
    const context = await newContext(browser, t.api.url);
    try {
      const p = await context.newPage();
      const login = new LoginPage(p);
      await login.open();
      await login.signIn(ada, temporary);
      const pw = new PasswordPage(p);
      await pw.waitFor();
      await shots.take(p, "must-change-password");
    } finally {
      await context.close();
    }
  });
});
