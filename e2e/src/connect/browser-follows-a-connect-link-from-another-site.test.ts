// In a real browser (Chromium): a user on the console's site clicks a connect link to the gateway's
// site. The gateway answers 303 with its cookie (HttpOnly, SameSite=Lax, Secure, Path=/proxy/{cr}/);
// the browser must send that cookie on the redirected request although the navigation started on
// another site (SameSite=Strict would fail exactly here), and then on the page's WebSocket. A second
// click on the same link shows the "already used" page. The control plane is an in-memory verifier:
// the journey on the bed covers the real one.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type RunningGateway, StaticUpstreams, selfSignedCertificate, startGateway } from "@berth/operator/gateway";
import { FakeVerifier } from "@berth/operator/gateway/testing";
import { type RunningStandin, startStandin } from "@berth/operator/standin";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeBrowser, launchBrowser, skipWithoutBrowser } from "../console/browser.ts";

let browser: Browser | undefined;
let standin: RunningStandin;
let gateway: RunningGateway;
let consoleSite: Server;
let consoleUrl: string;
const verifier = new FakeVerifier().session({
  sessionId: "ses_a",
  cr: "ses-a",
  clusterId: "clu_a",
  ownerId: "usr_alice",
  phase: "Running",
});

beforeAll(async () => {
  standin = await startStandin({ name: "the browser test" });
  gateway = await startGateway({
    clusterId: "clu_a",
    verifier,
    upstreams: new StaticUpstreams({ "*": `127.0.0.1:${standin.port}` }),
    tls: selfSignedCertificate({ names: ["127.0.0.1"] }),
  });
  // The "console": another site (localhost, plain HTTP) with a link to the gateway (127.0.0.1, HTTPS).
  consoleSite = createServer((req, res) => {
    const token = new URL(req.url ?? "/", "http://x").searchParams.get("token") ?? "";
    res
      .writeHead(200, { "content-type": "text/html" })
      .end(`<!doctype html><a id="open" href="${gateway.url}/proxy/ses-a/lab?svc_cnx=${token}">Open JupyterLab</a>`);
  });
  await new Promise<void>((r) => consoleSite.listen(0, "127.0.0.1", r));
  consoleUrl = `http://localhost:${(consoleSite.address() as AddressInfo).port}`;
  if (!skipWithoutBrowser()) browser = await launchBrowser();
});

afterAll(async () => {
  await closeBrowser(browser);
  consoleSite?.close();
  await gateway?.close();
  await standin?.close();
});

describe.skipIf(skipWithoutBrowser())("a browser following a connect link from the console's site", () => {
  it("lands on the application with a working WebSocket, and the link does not work twice", async () => {
    const context = await (browser as Browser).newContext({ ignoreHTTPSErrors: true });
    const page = await context.newPage();
    const token = verifier.issue("cnx_browser_1", "ses_a", "usr_alice");
    await page.goto(`${consoleUrl}/?token=${token}`);
    await page.click("#open");
    await page.waitForURL(`${gateway.url}/proxy/ses-a/lab`);
    await expect.poll(() => page.textContent('[data-testid="standin-ws"]')).toBe("echo: ping");
    expect(await page.textContent("h1")).toBe("JupyterLab");

    const [cookie] = await context.cookies(`${gateway.url}/proxy/ses-a/lab`);
    expect(cookie).toMatchObject({
      name: "berth_cnx",
      path: "/proxy/ses-a/",
      httpOnly: true,
      secure: true,
      sameSite: "Lax",
    });
    expect(await page.evaluate(() => document.cookie)).toBe(""); // HttpOnly: no script sees it

    await page.goto(`${consoleUrl}/?token=${token}`);
    await page.click("#open");
    await expect.poll(() => page.getAttribute('[data-testid="gateway-page"]', "data-reason")).toBe("token_used");
    await context.close();
  });
});
