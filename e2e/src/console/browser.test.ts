// closeBrowser: a Chromium that does not close in time is killed, so no teardown waits on it for ever.
import { setTimeout as sleep } from "node:timers/promises";
import type { Browser, BrowserContext } from "playwright-core";
import { describe, expect, it } from "vitest";
import { processesMentioning } from "../testbed/procfs.ts";
import { eventually } from "../testbed/waiting.test-support.ts";
import { closeBrowser, launchBrowser, skipWithoutBrowser } from "./browser.ts";
import { Visitors } from "./pages/visitors.ts";

describe("a browser test without Chromium", () => {
  it("is skipped on a developer's machine, and fails under CI=true", () => {
    const none = () => undefined;
    expect(skipWithoutBrowser({}, none)).toBe(true);
    expect(skipWithoutBrowser({ CI: "true" }, none)).toBe(false);
    expect(skipWithoutBrowser({}, () => "/usr/bin/chromium")).toBe(false);
  });
});

describe("closing the visitors' contexts", () => {
  it("returns in time when a context never answers (a Chromium that hangs), so closeBrowser runs next", async () => {
    const hung = { close: () => new Promise<void>(() => {}) } as unknown as BrowserContext;
    const browser = { newContext: async () => hung } as unknown as Browser;
    const people = new Visitors(
      () => browser,
      () => "http://127.0.0.1:1",
    );
    const refused = new Error("no sign-in needed here");
    await expect(
      people.signIn(
        { email: "a@example.com", password: "p" },
        {
          prepare: async () => {
            throw refused;
          },
        },
      ),
    ).rejects.toBe(refused);
    const closed = await Promise.race([people.closeAll(200).then(() => true), sleep(3000).then(() => false)]);
    expect(closed, "closeAll() returned").toBe(true);
  });
});

describe.skipIf(skipWithoutBrowser())("closeBrowser", () => {
  it("kills the browser's process when it has not closed in time", async () => {
    const browser = await launchBrowser();
    let marked: number[] = [];
    try {
      const marker = processesMentioning("--berth-browser=")
        .map((p) => /--berth-browser=\S+/.exec(p.cmdline)?.[0])
        .find((m) => m?.startsWith(`--berth-browser=${process.pid}-`));
      expect(marker).toBeDefined();
      // A browser that cannot close: stopped, only SIGKILL ends it.
      marked = processesMentioning(marker as string).map((p) => p.pid);
      for (const pid of marked) process.kill(pid, "SIGSTOP");
      await closeBrowser(browser, 1_000);
      await eventually(async () => processesMentioning(marker as string).length === 0, {
        what: "the browser's processes to end",
        timeoutMs: 10_000,
      });
    } finally {
      // Whatever failed above, no stopped Chromium stays behind.
      for (const pid of marked) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // gone already
        }
      }
      if (marked.length === 0) await closeBrowser(browser, 1_000);
    }
  });
});
