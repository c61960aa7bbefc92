// Chromium from Debian driven by playwright-core, screenshots under e2e/artifacts/console/ (git-ignored)
// and axe-core injected into the page for the accessibility check of every page.
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { expect } from "vitest";
import { processesMentioning } from "../testbed/procfs.ts";

export const ARTIFACTS = join(import.meta.dirname, "..", "..", "artifacts", "console");

const CANDIDATES = [
  process.env.BERTH_CHROMIUM,
  "/usr/bin/chromium",
  "/usr/bin/chromium-browser",
  "/usr/bin/google-chrome",
].filter(Boolean) as string[];

export function chromiumPath(): string | undefined {
  return CANDIDATES.find((p) => existsSync(p));
}

/**
 * Whether a browser test may be skipped: only where Chromium is missing and this is not CI. Under
 * CI=true a missing browser is a failure (launchBrowser says how to install it), never a silent skip.
 */
export function skipWithoutBrowser(env: NodeJS.ProcessEnv = process.env, find = chromiumPath): boolean {
  return find() === undefined && env.CI !== "true";
}

export async function launchBrowser(): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!executablePath)
    throw new Error(
      "Chromium is not installed: apt-get install -y chromium (.ci/run does it on CI), or set BERTH_CHROMIUM",
    );
  // A switch Chromium ignores, so that closeBrowser can find this browser's process if it hangs.
  const marker = `--berth-browser=${process.pid}-${randomBytes(6).toString("hex")}`;
  const browser = await chromium.launch({
    executablePath,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      marker,
    ],
  });
  markers.set(browser, marker);
  return browser;
}

const markers = new WeakMap<Browser, string>();

/**
 * browser.close(), bounded: a Chromium that does not exit within `timeoutMs` (seen once on a loaded CI
 * machine, a teardown that hung until its 240 s hook timeout) is killed with SIGKILL.
 */
export async function closeBrowser(browser: Browser | undefined, timeoutMs = 15_000): Promise<void> {
  if (!browser) return;
  let timer: NodeJS.Timeout | undefined;
  const closed = await Promise.race([
    browser.close().then(() => true),
    new Promise<false>((r) => {
      timer = setTimeout(() => r(false), timeoutMs);
    }),
  ]);
  clearTimeout(timer);
  const marker = markers.get(browser);
  if (closed || !marker) return;
  for (const p of processesMentioning(marker)) {
    try {
      process.kill(p.pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
}

/**
 * context.close() for each, bounded like closeBrowser: a Chromium that no longer answers does not answer
 * this either, and a teardown closing its contexts first waited until its hook timeout before closeBrowser
 * (which kills that Chromium) was reached.
 */
export async function closeContexts(contexts: Iterable<BrowserContext | undefined>, timeoutMs = 15_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all([...contexts].map((c) => c?.close().catch(() => {}))),
    new Promise<void>((r) => {
      timer = setTimeout(r, timeoutMs);
    }),
  ]);
  clearTimeout(timer);
}

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

export async function newContext(browser: Browser, baseURL: string, viewport = DESKTOP): Promise<BrowserContext> {
  return browser.newContext({ baseURL, viewport, ignoreHTTPSErrors: true });
}

/** Saves a full-page screenshot as artifacts/console/<journey>/<nn>-<name>.png. */
export class Screenshots {
  #n = 0;
  readonly dir: string;
  constructor(journey: string) {
    this.dir = join(ARTIFACTS, journey);
    rmSync(this.dir, { recursive: true, force: true });
    mkdirSync(this.dir, { recursive: true });
  }
  /** Call in afterEach: a failed test leaves a picture of what the browser showed. */
  async onFailure(page: Page | undefined, ctx: { task: { name: string; result?: { state?: string } } }): Promise<void> {
    if (!page || ctx.task.result?.state !== "fail") return;
    await this.take(page, `FAILED-${ctx.task.name.replace(/[^a-z0-9]+/gi, "-").slice(0, 60)}`).catch(() => {});
  }

  async take(page: Page, name: string): Promise<string> {
    this.#n++;
    const file = join(this.dir, `${String(this.#n).padStart(2, "0")}-${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    return file;
  }
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[]; failureSummary?: string }[];
}

/** Runs axe-core on the page as it is now; answers the serious and critical violations. */
export async function seriousA11yViolations(page: Page): Promise<AxeViolation[]> {
  const has = await page.evaluate(() => typeof (window as unknown as { axe?: unknown }).axe !== "undefined");
  // evaluate, not a script tag: the console's Content-Security-Policy (script-src 'self') stays on.
  if (!has) await page.evaluate(axeSource);
  const result = (await page.evaluate(async () => {
    const axe = (
      window as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<{ violations: AxeViolation[] }> } }
    ).axe;
    return axe.run(document, { resultTypes: ["violations"] });
  })) as { violations: AxeViolation[] };
  return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}

/** Fails the test when the page has serious or critical axe violations, naming each; `where` prefixes the message. */
export async function expectAccessible(page: Page, where?: string): Promise<void> {
  const v = await seriousA11yViolations(page);
  expect(v, where ? `${where}: ${describeViolations(v)}` : describeViolations(v)).toEqual([]);
}

export function describeViolations(vs: AxeViolation[]): string {
  return vs
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help}\n${v.nodes.map((n) => `    ${JSON.stringify(n.target)} ${n.failureSummary ?? ""}`).join("\n")}`,
    )
    .join("\n");
}
