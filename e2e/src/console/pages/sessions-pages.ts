// Page objects of the sessions list, the create wizard, a session's page and the queue.

import { LOG_VIEWER_TEST_IDS } from "@berth/console/test-ids/log-viewer";
import { NEW_SESSION_TEST_IDS as W } from "@berth/console/test-ids/new-session";
import { QUEUE_TEST_IDS } from "@berth/console/test-ids/queue";
import { SESSION_TEST_IDS as S } from "@berth/console/test-ids/session";
import { SESSIONS_TEST_IDS } from "@berth/console/test-ids/sessions";
import { SHELL_TEST_IDS } from "@berth/console/test-ids/shell";
import type { Page } from "playwright-core";
import { MonitoringPanel } from "./monitoring-panel.ts";

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
    return this.page.locator(`[data-testid="${SESSIONS_TEST_IDS.row}"][data-session-id="${id}"]`);
  }
  async waitForPhase(id: string, phase: string, timeout = 30_000): Promise<void> {
    await this.page
      .locator(`[data-testid="${SESSIONS_TEST_IDS.row}"][data-session-id="${id}"][data-phase="${phase}"]`)
      .waitFor({ timeout });
  }
  /** The list's "nothing here yet" state. */
  emptyState() {
    return this.page.getByTestId(SHELL_TEST_IDS.emptyState);
  }
  liveMode() {
    return this.page.getByTestId(SHELL_TEST_IDS.liveIndicator).getAttribute("data-mode");
  }
}

export class NewSessionPage {
  readonly page: Page;
  constructor(page: Page) {
    this.page = page;
  }
  async open(): Promise<void> {
    await this.page.goto("/sessions/new");
    await this.page.getByTestId(W.form).waitFor();
  }
  /**
   * Through the navigation's Sessions link and the list's "New session" (no full page load: the live
   * feed's stream stays as it is); the wizard waits for the catalog.
   */
  async openFromSessions(timeout = 30_000): Promise<void> {
    await this.page.getByRole("link", { name: "Sessions", exact: true }).click();
    await this.page.getByTestId(SESSIONS_TEST_IDS.newSession).click();
    await this.page.getByTestId(W.form).waitFor({ timeout });
  }
  /** The tag on an image of the member's own. */
  yoursBadge() {
    return this.page.getByTestId(W.imageYours).first();
  }
  /** The cost step's rate class ("guaranteed rate", "borrowed rate"). */
  rateClass() {
    return this.page.getByTestId(W.costRateClass);
  }
  /** An offering's radio button. */
  offering(name: string) {
    return this.page.getByTestId(W.offering(name));
  }
  async chooseOffering(name: string): Promise<void> {
    await this.page.getByTestId(W.offering(name)).check();
  }
  /** What an offering's tier says (its share of a card, GPU memory, model). */
  tierText(offering: string) {
    return this.page.getByTestId(W.offeringTier(offering)).textContent();
  }
  freeText(offering: string) {
    return this.page.getByTestId(W.offeringFree(offering)).textContent();
  }
  async name(name: string): Promise<void> {
    await this.page.getByTestId(W.sessionName).fill(name);
  }
  /** The cost preview's "a GPU is free now". */
  gpuNow() {
    return this.page.getByTestId(W.gpuNow);
  }
  costTotal() {
    return this.page.getByTestId(W.costTotal);
  }
  /** Waits for the cost preview's answer: it starts now, or it will queue. */
  async previewAnswered(): Promise<void> {
    await this.page.locator(`[data-testid="${W.gpuNow}"], [data-testid="${W.willQueue}"]`).first().waitFor();
  }
  /** Why Create is off, beside it. */
  createBlocked() {
    return this.page.getByTestId(W.createBlocked);
  }
  /** The refusal's way out (a link: ask for credits, or the sessions list). */
  refusalRemedy() {
    return this.page.getByTestId(W.refusalRemedy);
  }
  /** "1 of 2 GPUs free now" → 1 */
  async freeGpus(offering: string): Promise<number> {
    const t = (await this.freeText(offering)) ?? "";
    const m = /(\d+) of (\d+)/.exec(t);
    return m ? Number(m[1]) : Number.NaN;
  }
  /** The cost preview's "cannot start now" panel, once shown. */
  async refusal(): Promise<{ code: string; limit: string; explanation: string; message: string }> {
    const panel = this.page.getByTestId(W.startRefusal);
    await panel.waitFor();
    return {
      code: (await panel.getAttribute("data-code")) ?? "",
      limit: (await panel.getAttribute("data-limit")) ?? "",
      explanation: ((await panel.getByTestId(W.refusalExplanation).textContent()) ?? "").trim(),
      message: ((await panel.getByTestId(W.refusalMessage).textContent()) ?? "").trim(),
    };
  }
  createButton() {
    return this.page.getByTestId(W.create);
  }
  /** The limits step's words on the resource policy's idle rules and running time. */
  limitsPolicy() {
    return this.page.getByTestId(W.limitsPolicy);
  }
  idleTimeout() {
    return this.page.getByTestId(W.idleTimeout);
  }
  maxRuntime() {
    return this.page.getByTestId(W.maxRuntime);
  }
  /** Types the asked idle timeout (minutes) and maximum running time (hours). */
  async askLimits(idleMinutes: string, runtimeHours: string): Promise<void> {
    await this.idleTimeout().fill(idleMinutes);
    await this.maxRuntime().fill(runtimeHours);
  }
  idleTimeoutProblem() {
    return this.page.getByTestId(W.idleTimeoutProblem);
  }
  maxRuntimeProblem() {
    return this.page.getByTestId(W.maxRuntimeProblem);
  }
  /** The Capacity step (docs/dev/fair-share.md): guaranteed by default, borrowed by opt-in. */
  async chooseCapacity(c: "guaranteed" | "borrowed"): Promise<void> {
    await this.page.getByTestId(c === "borrowed" ? W.capacityBorrowed : W.capacityGuaranteed).check();
  }
  reclaimTerms() {
    return this.page.getByTestId(W.reclaimTerms);
  }
  /** A volume's choice in the Volumes step: its checkbox, its read-only box, its shared mark. */
  volumeChoice(volumeId: string) {
    return this.page.locator(`[data-testid="${W.volumeChoice}"][data-volume-id="${volumeId}"]`);
  }
  async mountVolume(volumeId: string): Promise<void> {
    await this.volumeChoice(volumeId).getByRole("checkbox").first().check();
  }
  volumeReadOnly(volumeId: string) {
    return this.volumeChoice(volumeId).getByRole("checkbox", { name: "read-only" });
  }
  volumeShared(volumeId: string) {
    return this.volumeChoice(volumeId).getByTestId(W.volumeShared).textContent();
  }
  mountPath() {
    return this.page.getByLabel("Mount at").inputValue();
  }
  costStorage() {
    return this.page.getByTestId(W.costStorage).textContent();
  }
  async create(name: string): Promise<string> {
    await this.name(name);
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
    await this.page.getByTestId(S.name).waitFor();
  }
  /** Its capacity class as the Details list names it ("guaranteed" or "borrowed"). */
  capacityClass() {
    return this.page.getByTestId(S.capacityClass).getAttribute("data-class");
  }
  /** The Details list's words on its class and the rate that applies. */
  capacityText() {
    return this.page.getByTestId(S.capacityClass).textContent();
  }
  reclaimNotice() {
    return this.page.getByTestId(S.reclaimNotice);
  }
  /** "Paused … to give its borrowed GPU back", once a reclaim paused it. */
  reclaimPaused() {
    return this.page.getByTestId(S.reclaimPaused);
  }
  /** The timeline ("What happened") as text. */
  timelineText() {
    return this.page.getByTestId(S.timeline).textContent();
  }
  phase() {
    return this.page.locator(`[data-testid="${S.phase}"] [data-testid="phase"]`).getAttribute("data-phase");
  }
  async waitForPhase(phase: string, timeout = 30_000): Promise<void> {
    await this.page.locator(`[data-testid="${S.phase}"] [data-phase="${phase}"]`).waitFor({ timeout });
  }
  /** An action's button (its confirm dialog follows for all but resume). */
  actButton(action: "pause" | "resume" | "restart" | "terminate") {
    return this.page.getByTestId(S.action(action));
  }
  async act(action: "pause" | "resume" | "restart" | "terminate"): Promise<void> {
    await this.page.getByTestId(S.action(action)).click();
    if (action !== "resume") await this.page.getByTestId(SHELL_TEST_IDS.confirmOk).click();
  }
  idleWarning() {
    return this.page.getByTestId(S.idleWarning);
  }
  async keepRunning(): Promise<void> {
    await this.page.getByTestId(S.keepRunning).click();
  }
  /** The idle check's notice that it is suspended; data-missing names the signal it lacks. */
  idleSuspended() {
    return this.page.getByTestId(S.idleSuspended);
  }
  pauseReason() {
    return this.page.getByTestId(S.pauseReason);
  }
  node() {
    return this.page.getByTestId(S.node);
  }
  /** Waits for an entry with this text on the session's timeline. */
  async timelineShows(text: string): Promise<void> {
    await this.page.getByTestId(S.timeline).getByText(text).first().waitFor();
  }
  /** Waits for a log line with this text. */
  async logsShow(text: string): Promise<void> {
    await this.page.getByTestId(LOG_VIEWER_TEST_IDS.text).getByText(text).first().waitFor();
  }
  /** Opens the session's application (lab, terminal, code) from its connect button: the new tab. */
  async connect(kind: string): Promise<Page> {
    const [tab] = await Promise.all([
      this.page.context().waitForEvent("page"),
      this.page.getByTestId(S.connect(kind)).click(),
    ]);
    return tab;
  }
  /** The GPU it holds ("1/8 of …") and the cards' UUIDs. */
  gpu() {
    return this.page.getByTestId(S.gpu).textContent();
  }
  cards() {
    return this.page.getByTestId(S.cards).textContent();
  }
  /** The GPU charts' section, and one of its monitoring panels by the panel's name. */
  gpuCharts() {
    return this.page.getByTestId(S.gpuCharts);
  }
  panel(name: string) {
    return new MonitoringPanel(this.page.locator(`berth-monitoring-panel[panel="${name}"]`));
  }
  /** A volume's mount on the page, by the volume's id. */
  mount(volumeId: string) {
    return this.page.locator(`[data-testid="${S.mount}"][data-volume-id="${volumeId}"]`);
  }
  /** What a queued session's page says about its wait. */
  queueInfo() {
    return this.page.getByTestId(S.queueInfo);
  }
}

export class QueuePage {
  readonly page: Page;
  constructor(page: Page) {
    this.page = page;
  }
  async open(): Promise<void> {
    await this.page.goto("/queue");
  }
  row(sessionId: string) {
    return this.page.locator(`[data-testid="${QUEUE_TEST_IDS.row}"][data-session-id="${sessionId}"]`);
  }
  position(sessionId: string) {
    return this.row(sessionId).getByTestId(QUEUE_TEST_IDS.position).textContent();
  }
  reason(sessionId: string) {
    return this.row(sessionId).getByTestId(QUEUE_TEST_IDS.reason).textContent();
  }
}
