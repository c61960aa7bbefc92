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
import { Shell } from "./pages/shell.ts";
import { Visitors } from "./pages/visitors.ts";
import { WebhooksPage } from "./pages/webhooks-page.ts";

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
  let hooks: WebhooksPage;
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
    hooks = new WebhooksPage(page);
    await hooks.openFromMenu();
    await hooks.shell.sees("No webhook yet");
    await expectAccessible(page, "empty");
    await hooks.add("http://insecure.example.test/");
    await hooks.shell.sees("must use https");
    await hooks.add(receiver.url, "the team's automation");
    secret = await hooks.shownSecret();
    expect(secret).toMatch(/^whsec_/);
    await shots.take(page, "secret-once");
    await expectAccessible(page, "secret shown");
    await hooks.storedSecret();
    await page.reload();
    await hooks.rows().waitFor();
    expect(await page.content()).not.toContain(secret);
  });

  it("sends a test event that the receiver verifies, sees it Delivered, and redelivers it", async () => {
    await hooks.test(receiver.url);
    await hooks.shell.sees("Test event sent.");
    await receiver.until((rs) => rs.length >= 1);
    const body = new Webhook(secret).verify(receiver.received[0]?.body ?? "", receiver.received[0]?.headers ?? {});
    expect(body).toMatchObject({ type: "webhook.test" });
    await hooks.showDeliveries(receiver.url);
    await expect.poll(() => hooks.newestDeliveryState()).toBe("Delivered");
    await expectAccessible(page, "deliveries");
    await hooks.redeliverNewest();
    await hooks.shell.sees("Queued for delivery again.");
    await receiver.until((rs) => rs.length >= 2);
    expect(receiver.received[1]?.id).toBe(receiver.received[0]?.id); // the same webhook-id: dedupe by it
  });

  it("rotates the secret: a new one is shown once and both sign during the overlap", async () => {
    await hooks.rotate(receiver.url);
    const fresh = await hooks.shownSecret();
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(secret);
    await hooks.test(receiver.url);
    await receiver.until((rs) => rs.length >= 3);
    const last = receiver.received[2];
    expect(() => new Webhook(fresh).verify(last?.body ?? "", last?.headers ?? {})).not.toThrow();
    expect(() => new Webhook(secret).verify(last?.body ?? "", last?.headers ?? {})).not.toThrow();
  });

  it("shows a member no Webhooks page", async () => {
    const shell = new Shell(await people.signIn(member));
    expect(await shell.link("Webhooks").count()).toBe(0);
    expect(await shell.adminMenu().count()).toBe(0);
  });
});
