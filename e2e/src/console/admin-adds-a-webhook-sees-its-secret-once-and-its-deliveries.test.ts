// Journey: an organization's admin adds a webhook in the console, copies its secret (shown once), sends
// a test event that a real receiver on loopback gets (signature checked by `standardwebhooks`), watches
// the delivery turn Delivered, redelivers it, and rotates the secret. A member sees no Webhooks page.
// axe-core checks the page in each state.
import {
  type IdentityTestApi,
  type Receiver,
  startIdentityTestApi,
  startReceiver,
  type TestUser,
  WebhookDispatcher,
  WebhookGuard,
} from "@berth/api/testing";
import { ensureConsoleBuilt } from "@berth/console";
import pino from "pino";
import type { Browser, Page } from "playwright-core";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { closeBrowser, expectAccessible, launchBrowser, Screenshots } from "./browser.ts";
import { Visitors } from "./pages/login-page.ts";

describe("an organization admin manages a webhook in the console", () => {
  let t: IdentityTestApi;
  let browser: Browser;
  let receiver: Receiver;
  let dispatcher: WebhookDispatcher;
  const people = new Visitors(
    () => browser,
    () => t.api.url,
  );
  const shots = new Screenshots("webhooks");
  let admin: TestUser;
  let member: TestUser;
  let page: Page;
  let secret = "";

  beforeAll(async () => {
    ensureConsoleBuilt();
    t = await startIdentityTestApi();
    receiver = await startReceiver();
    // The operator trusts the local receiver (BERTH_WEBHOOK_ALLOW_HOSTS=127.0.0.1), in the API and the worker.
    // The worker opens what the API sealed: the same keys (here, the same box).
    t.deps.webhooks = { ...t.deps.webhooks, guard: new WebhookGuard({ allowHosts: ["127.0.0.1"] }) };
    dispatcher = new WebhookDispatcher({
      db: t.database.db,
      log: pino({ level: "silent" }),
      guard: new WebhookGuard({ allowHosts: ["127.0.0.1"] }),
      secrets: t.deps.webhooks.secrets,
      ca: receiver.ca,
      pollMs: 200,
    });
    dispatcher.start();
    const org = await t.anOrganization("Acme");
    admin = await t.aUser({ email: `admin-${Date.now()}@acme.test` });
    member = await t.aUser({ email: `member-${Date.now()}@acme.test` });
    await t.member(admin, org.id, null, "org_admin");
    await t.member(member, org.id, null, "member");
    browser = await launchBrowser();
  });
  afterEach(async (ctx) => shots.onFailure(people.current, ctx));
  afterAll(async () => {
    await people.closeAll();
    await closeBrowser(browser);
    await dispatcher?.stop();
    await receiver?.stop();
    await t?.stop();
  });

  it("adds an endpoint and sees its secret once", async () => {
    page = await people.signIn(admin);
    await page.getByTestId("admin-menu").click();
    await page.getByRole("link", { name: "Webhooks", exact: true }).click();
    await page.getByRole("heading", { name: "Webhooks", level: 1 }).waitFor();
    await page.getByText("No webhook yet").waitFor();
    await expectAccessible(page, "empty");
    await page.getByLabel("Endpoint URL (https)").fill("http://insecure.example.test/");
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await page.getByText("must use https").waitFor();
    await page.getByLabel("Endpoint URL (https)").fill(receiver.url);
    await page.getByLabel("Description").fill("the team's automation");
    await page.getByRole("button", { name: "Add endpoint" }).click();
    const shown = page.getByTestId("webhook-secret");
    await shown.waitFor();
    secret = (await shown.textContent()) ?? "";
    expect(secret).toMatch(/^whsec_/);
    await shots.take(page, "secret-once");
    await expectAccessible(page, "secret shown");
    await page.getByRole("button", { name: "I have stored it" }).click();
    await page.reload();
    await page.getByTestId("webhook-row").waitFor();
    expect(await page.content()).not.toContain(secret);
  });

  it("sends a test event that the receiver verifies, sees it Delivered, and redelivers it", async () => {
    await page.getByRole("button", { name: `Test ${receiver.url}` }).click();
    await page.getByText("Test event sent.").waitFor();
    await receiver.until((rs) => rs.length >= 1);
    const body = new Webhook(secret).verify(receiver.received[0]?.body ?? "", receiver.received[0]?.headers ?? {});
    expect(body).toMatchObject({ type: "webhook.test" });
    await page.getByRole("button", { name: `Deliveries of ${receiver.url}` }).click();
    await expect
      .poll(async () => {
        await page.getByRole("button", { name: "Refresh" }).click();
        return page.getByTestId("delivery-state").first().textContent();
      })
      .toBe("Delivered");
    await expectAccessible(page, "deliveries");
    await page.getByRole("button", { name: /^Redeliver msg_/ }).click();
    await page.getByText("Queued for delivery again.").waitFor();
    await receiver.until((rs) => rs.length >= 2);
    expect(receiver.received[1]?.id).toBe(receiver.received[0]?.id); // the same webhook-id: dedupe by it
  });

  it("rotates the secret: a new one is shown once and both sign during the overlap", async () => {
    await page.getByRole("button", { name: `Rotate secret of ${receiver.url}` }).click();
    await page.getByTestId("confirm-dialog").waitFor();
    await page.getByTestId("confirm-ok").click();
    const shown = page.getByTestId("webhook-secret");
    await shown.waitFor();
    const fresh = (await shown.textContent()) ?? "";
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(secret);
    await page.getByRole("button", { name: `Test ${receiver.url}` }).click();
    await receiver.until((rs) => rs.length >= 3);
    const last = receiver.received[2];
    expect(() => new Webhook(fresh).verify(last?.body ?? "", last?.headers ?? {})).not.toThrow();
    expect(() => new Webhook(secret).verify(last?.body ?? "", last?.headers ?? {})).not.toThrow();
  });

  it("shows a member no Webhooks page", async () => {
    const p = await people.signIn(member);
    expect(await p.getByRole("link", { name: "Webhooks", exact: true }).count()).toBe(0);
    expect(await p.getByTestId("admin-menu").count()).toBe(0);
  });
});
