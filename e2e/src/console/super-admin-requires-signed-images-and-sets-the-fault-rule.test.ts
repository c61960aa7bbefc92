// Journey: a super_admin reads Berth's own signing key, adds a team's key (a key of the wrong kind first:
// the API's refusal is shown and nothing is saved), requires signatures, then removes the key; and sets
// the hardware-fault rule (a bad XID first). Each save is read back from Postgres. Real API, Postgres and
// Chromium; axe-core on the page.
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readSystemSettings } from "@berth/api/testing";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { closeBrowser, closeContexts, expectAccessible, launchBrowser, newContext, Screenshots } from "./browser.ts";
import { LoginPage } from "./pages/login-page.ts";
import { PasswordPage } from "./pages/password-page.ts";
import { SettingsPage } from "./pages/settings-page.ts";
import { ADMIN_EMAIL, ADMIN_FIRST_PASSWORD, type ConsoleStack, startConsoleStack } from "./stack.ts";

const pemOf = (k: import("node:crypto").KeyObject) => k.export({ type: "spki", format: "pem" }).toString();

describe("a super_admin requires signed images and sets the fault rule", () => {
  let stack: ConsoleStack;
  let browser: Browser;
  let context: BrowserContext;
  let admin: Page;
  let dir: string;
  const berth = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const team = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const shots = new Screenshots("super-admin-requires-signed-images-and-sets-the-fault-rule");

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "berth-signing-journey-"));
    const keyFile = join(dir, "berth.pem");
    writeFileSync(keyFile, berth.privateKey.export({ type: "pkcs8", format: "pem" }));
    stack = await startConsoleStack({ BERTH_IMAGE_SIGNING_KEY_FILE: keyFile });
    browser = await launchBrowser();
    context = await newContext(browser, stack.url);
    admin = await context.newPage();
    const login = new LoginPage(admin);
    await login.open();
    await login.signIn(ADMIN_EMAIL, ADMIN_FIRST_PASSWORD);
    await new PasswordPage(admin).waitFor();
    await new PasswordPage(admin).change(ADMIN_FIRST_PASSWORD, "a-brand-new-admin-password");
    await admin.waitForURL((u) => u.pathname !== "/password");
  });
  afterEach(async (ctx) => shots.onFailure(admin, ctx));
  afterAll(async () => {
    await closeContexts([context]);
    await closeBrowser(browser);
    await stack?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("adds a team's key, requires signatures, and removes the key again", async () => {
    const settings = new SettingsPage(admin);
    await settings.openFromMenu();
    await expect.poll(() => settings.signingKey("berth").textContent()).toContain("ecdsa-p256-sha256");
    await expectAccessible(admin, "settings with image signatures");

    const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey;
    await settings.saveSignatures({ required: true, add: { name: "platform", pem: pemOf(rsa) } });
    await settings.shell.sees("Berth verifies ECDSA P-256 or Ed25519");
    await shots.take(admin, "signatures-refused");
    expect((await readSystemSettings(stack.db.db)).image_signatures).toEqual({ required: false, keys: [] });

    await settings.saveSignatures({ required: true, add: { name: "platform", pem: pemOf(team.publicKey) } });
    await settings.saved("image_signatures").waitFor();
    await settings.signingKey("platform").waitFor();
    await shots.take(admin, "signatures-required");
    const saved = (await readSystemSettings(stack.db.db)).image_signatures;
    expect(saved.required).toBe(true);
    expect(saved.keys).toEqual([{ name: "platform", public_key: pemOf(team.publicKey) }]);

    await settings.saveSignatures({ required: false, remove: ["platform"] });
    await settings.saved("image_signatures").waitFor();
    await expect.poll(() => settings.signingKey("platform").count()).toBe(0);
    expect((await readSystemSettings(stack.db.db)).image_signatures).toEqual({ required: false, keys: [] });
  });

  it("sets the hardware-fault rule, refusing an XID that is not a number", async () => {
    const settings = new SettingsPage(admin);
    await settings.saveFaultRule({
      xids: "48, seventy-nine",
      ecc: false,
      threshold: 2,
      windowMinutes: 30,
      drain: true,
    });
    await settings.shell.sees("Not saved");
    expect((await readSystemSettings(stack.db.db)).hardware_faults.threshold).toBe(1);

    await settings.saveFaultRule({ xids: "48, 79", ecc: false, threshold: 2, windowMinutes: 30, drain: true });
    await settings.saved("hardware_faults").waitFor();
    await shots.take(admin, "fault-rule-saved");
    expect((await readSystemSettings(stack.db.db)).hardware_faults).toEqual({
      xids: [48, 79],
      ecc_double_bit: false,
      threshold: 2,
      window_minutes: 30,
      action: "drain",
    });
  });
});
