// Journey: a member opens Notification settings from the bell, turns "volume near quota" off, the API
// shows it off and notify() then writes no such notification (a critical one still arrives); a critical
// kind is shown always on and the API refuses to turn it off with its envelope. The member sees only the
// kinds that apply to them; an organization admin also sees the administrators' kinds. Real API,
// Postgres, Chromium.

import { type IdentityTestApi, notify, startIdentityTestApi, type TestUser } from "@berth/api/testing";
import { ensureConsoleBuilt } from "@berth/console";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { apiAs, refusalOf } from "../api-client.ts";
import { closeBrowser, closeContexts, expectAccessible, launchBrowser, newContext, Screenshots } from "./browser.ts";
import { LoginPage } from "./pages/login-page.ts";
import { NotificationSettingsPage } from "./pages/notification-settings-page.ts";
import { Shell } from "./pages/shell.ts";

describe("a member turns a kind of notification off", () => {
  let t: IdentityTestApi;
  let browser: Browser;
  let context: BrowserContext | undefined;
  let page: Page;
  let alice: TestUser;
  let orgId: string;
  let admin: TestUser;
  const shots = new Screenshots("member-turns-a-kind-of-notification-off");

  const kinds = async (kind: string) =>
    (await t.database.db("notifications").where({ user_id: alice.id, kind }).count<{ n: string }[]>("* as n"))[0]?.n;

  beforeAll(async () => {
    ensureConsoleBuilt();
    t = await startIdentityTestApi();
    const org = await t.anOrganization("Acme");
    orgId = org.id;
    alice = await t.aUser({ email: `alice-${Date.now()}@acme.test` });
    await t.member(alice, org.id, null, "member");
    admin = await t.aUser({ email: `admin-${Date.now()}@acme.test` });
    await t.member(admin, org.id, null, "org_admin");
    browser = await launchBrowser();
    context = await newContext(browser, t.api.url);
    page = await context.newPage();
    const login = new LoginPage(page);
    await login.open();
    await login.signIn(alice.email, alice.password);
    await new Shell(page).accountMenu().waitFor();
  });
  afterEach(async (ctx) => shots.onFailure(page, ctx));
  afterAll(async () => {
    await closeContexts([context]);
    await closeBrowser(browser);
    await t?.stop();
  });

  it("reaches the page from the bell and lists the kinds that apply to a member, with their descriptions", async () => {
    const settings = new NotificationSettingsPage(page);
    await settings.openFromBell();
    expect(new URL(page.url()).pathname).toBe("/settings/notifications");
    const prefs = await apiAs(t.api.url, alice.token).call("getNotificationPreferences");
    const shown = await settings.kinds();
    const applying = prefs.data.filter((p) => p.applies_to_me);
    expect(shown).toEqual(applying.map((p) => p.kind));
    expect(shown).toContain("volume.near_quota");
    for (const adminKind of ["quota.request_received", "webhook.endpoint_disabled", "cluster.unreachable"])
      expect(shown).not.toContain(adminKind);
    await expect.poll(() => settings.firstSwitch().isChecked()).toBe(true);
    await expectAccessible(page, "all on");
    await shots.take(page, "all-on");
  });

  it("turns volume near quota off; the API shows it off and no such notification is written", async () => {
    const settings = new NotificationSettingsPage(page);
    const toggle = settings.toggle("volume.near_quota");
    expect(await toggle.isDisabled()).toBe(false);
    await toggle.click();
    await settings.saved().waitFor();
    await expect.poll(() => toggle.isChecked()).toBe(false);
    const prefs = await apiAs(t.api.url, alice.token).call("getNotificationPreferences");
    expect(prefs.data).toContainEqual(expect.objectContaining({ kind: "volume.near_quota", enabled: false }));
    await expectAccessible(page, "one off");
    await shots.take(page, "volume-near-quota-off");

    const at = new Date();
    const base = { userId: alice.id, organizationId: orgId, at };
    await notify(t.database.db, {
      ...base,
      kind: "volume.near_quota",
      title: "Volume nearly full",
      body: "Volume data is 92 % full.",
      data: { volume_id: "vol_demo" },
    });
    await notify(t.database.db, {
      ...base,
      kind: "session.failed",
      title: "Session failed",
      body: "Session ses_demo failed.",
      data: { session_id: "ses_demo" },
    });
    expect(await kinds("volume.near_quota")).toBe("0");
    expect(await kinds("session.failed")).toBe("1");
    const list = await apiAs(t.api.url, alice.token).call("listNotifications");
    expect(list.data.map((n) => n.kind)).toEqual(["session.failed"]);
  });

  it("shows a critical kind always on with the reason, and the API refuses to turn it off", async () => {
    const settings = new NotificationSettingsPage(page);
    const toggle = settings.toggle("session.failed");
    expect(await toggle.isChecked()).toBe(true);
    expect(await toggle.isDisabled()).toBe(true);
    expect(await settings.alwaysOn("session.failed").textContent()).toContain("cannot be turned off");
    const refused = await refusalOf(
      apiAs(t.api.url, alice.token).call("updateNotificationPreferences", {
        body: { preferences: [{ kind: "session.failed", enabled: false }] },
      }),
    );
    expect(refused.status).toBe(400);
    expect(refused.code).toBe("validation_failed");
    expect(JSON.stringify(refused.details)).toContain("critical_kind");
    const prefs = await apiAs(t.api.url, alice.token).call("getNotificationPreferences");
    expect(prefs.data).toContainEqual(expect.objectContaining({ kind: "session.failed", enabled: true }));
  });

  it("shows the API's refusal in words when a critical kind is forced off in the page", async () => {
    // A tampered page (the switch enabled by hand) still cannot turn it off: the real API refuses and the
    // page shows its envelope in words, then the switch goes back to what the API holds.
    const settings = new NotificationSettingsPage(page);
    const toggle = settings.toggle("session.failed");
    await toggle.evaluate((el) => {
      (el as HTMLInputElement).disabled = false;
    });
    await toggle.click();
    await settings.shell.errorPanel().waitFor();
    expect(await settings.shell.errorPanel().getAttribute("data-code")).toBe("validation_failed");
    expect(await settings.shell.errorMessage().textContent()).toMatch(/\S/);
    await expect.poll(() => toggle.isChecked()).toBe(true);
    await expect.poll(() => toggle.isDisabled()).toBe(true);
    await expectAccessible(page, "refused");
    await shots.take(page, "refused");
  });

  it("lists the administrators' kinds for an organization admin, but not the super admins' ones", async () => {
    const adminContext = await newContext(browser, t.api.url);
    try {
      const adminPage = await adminContext.newPage();
      const login = new LoginPage(adminPage);
      await login.open();
      await login.signIn(admin.email, admin.password);
      const settings = new NotificationSettingsPage(adminPage);
      await settings.shell.accountMenu().waitFor();
      await settings.open(t.api.url);
      const shown = await settings.kinds();
      expect(shown).toEqual(expect.arrayContaining(["quota.request_received", "webhook.endpoint_disabled"]));
      expect(shown).not.toContain("cluster.unreachable");
      await expectAccessible(adminPage, "organization admin");
      await shots.take(adminPage, "organization-admin");
    } finally {
      await adminContext.close().catch(() => {});
    }
  });
});
