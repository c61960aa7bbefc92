// Page objects of the sessions list, the create wizard, a session's page and the queue.

import { TEST_IDS } from "@berth/console/test-ids";
import type { Page } from "playwright-core";

export class SessionsListPage {
  readonly page: Page;
  constructor(page: Page) {
    this.page = page;
  }
  async open(query = ""): Promise<void> {
    await this.page.goto(`/sessions${query}`);
    await this.page.getByRole("heading", { name: "Sessions", level: 1 }).waitFor();
  }
  row(id: string) {
    return this.page.locator(`[data-testid="session-row"][data-session-id="${id}"]`);
  }
  async waitForPhase(id: string, phase: string, timeout = 30_000): Promise<void> {
    await this.page
      .locator(`[data-testid="session-row"][data-session-id="${id}"][data-phase="${phase}"]`)
      .waitFor({ timeout });
  }
  liveMode() {
    return this.page.getByTestId(TEST_IDS.shell.liveIndicator).getAttribute("data-mode");
  }
}

export class NewSessionPage {
  readonly page: Page;
  constructor(page: Page) {
    this.page = page;
  }
  async open(): Promise<void> {
    await this.page.goto("/sessions/new");
    await this.page.getByTestId(TEST_IDS.wizard.form).waitFor();
  }
  async chooseOffering(name: string): Promise<void> {
    await this.page.getByTestId(`offering-${name}`).check();
  }
  freeText(offering: string) {
    return this.page.getByTestId(`offering-free-${offering}`).textContent();
  }
  /** "1 of 2 GPUs free now" → 1 */
  async freeGpus(offering: string): Promise<number> {
    const t = (await this.freeText(offering)) ?? "";
    const m = /(\d+) of (\d+)/.exec(t);
    return m ? Number(m[1]) : Number.NaN;
  }
  /** The cost preview's "cannot start now" panel, once shown. */
  async refusal(): Promise<{ code: string; limit: string; explanation: string; message: string }> {
    const panel = this.page.getByTestId("start-refusal");
    await panel.waitFor();
    return {
      code: (await panel.getAttribute("data-code")) ?? "",
      limit: (await panel.getAttribute("data-limit")) ?? "",
      explanation: ((await panel.getByTestId("refusal-explanation").textContent()) ?? "").trim(),
      message: ((await panel.getByTestId("refusal-message").textContent()) ?? "").trim(),
    };
  }
  createButton() {
    return this.page.getByTestId(TEST_IDS.wizard.create);
  }
  /** The limits step's words on the resource policy's idle rules and running time. */
  limitsPolicy() {
    return this.page.getByTestId(TEST_IDS.wizard.limitsPolicy);
  }
  idleTimeout() {
    return this.page.getByTestId(TEST_IDS.wizard.idleTimeout);
  }
  maxRuntime() {
    return this.page.getByTestId(TEST_IDS.wizard.maxRuntime);
  }
  /** Types the asked idle timeout (minutes) and maximum running time (hours). */
  async askLimits(idleMinutes: string, runtimeHours: string): Promise<void> {
    await this.idleTimeout().fill(idleMinutes);
    await this.maxRuntime().fill(runtimeHours);
  }
  idleTimeoutProblem() {
    return this.page.getByTestId(TEST_IDS.wizard.idleTimeoutProblem);
  }
  maxRuntimeProblem() {
    return this.page.getByTestId(TEST_IDS.wizard.maxRuntimeProblem);
  }
  /** The Capacity step (docs/dev/fair-share.md): guaranteed by default, borrowed by opt-in. */
  async chooseCapacity(c: "guaranteed" | "borrowed"): Promise<void> {
    await this.page
      .getByTestId(c === "borrowed" ? TEST_IDS.wizard.capacityBorrowed : TEST_IDS.wizard.capacityGuaranteed)
      .check();
  }
  reclaimTerms() {
    return this.page.getByTestId(TEST_IDS.wizard.reclaimTerms);
  }
  async create(name: string): Promise<string> {
    await this.page.getByTestId("session-name").fill(name);
    await this.createButton().click();
    await this.page.waitForURL((u) => /^\/sessions\/ses_/.test(u.pathname));
    return new URL(this.page.url()).pathname.split("/").at(-1) as string;
  }
}

export class SessionPage {
  readonly page: Page;
  constructor(page: Page) {
    this.page = page;
  }
  async open(id: string): Promise<void> {
    await this.page.goto(`/sessions/${id}`);
    await this.page.getByTestId("session-name").waitFor();
  }
  /** Its capacity class as the Details list names it ("guaranteed" or "borrowed"). */
  capacityClass() {
    return this.page.getByTestId("session-capacity-class").getAttribute("data-class");
  }
  reclaimNotice() {
    return this.page.getByTestId("reclaim-notice");
  }
  phase() {
    return this.page.locator('[data-testid="session-phase"] [data-testid="phase"]').getAttribute("data-phase");
  }
  async waitForPhase(phase: string, timeout = 30_000): Promise<void> {
    await this.page.locator(`[data-testid="session-phase"] [data-phase="${phase}"]`).waitFor({ timeout });
  }
  async act(action: "pause" | "resume" | "restart" | "terminate"): Promise<void> {
    await this.page.getByTestId(`action-${action}`).click();
    if (action !== "resume") await this.page.getByTestId(TEST_IDS.shell.confirmOk).click();
  }
  idleWarning() {
    return this.page.getByTestId("idle-warning");
  }
  async keepRunning(): Promise<void> {
    await this.page.getByTestId("keep-running").click();
  }
  pauseReason() {
    return this.page.getByTestId("pause-reason");
  }
}
