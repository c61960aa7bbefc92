// Page object of a session's page (console/src/views/session-detail-view/): its state, actions, logs
// and monitoring panels.
import { LOG_VIEWER_TEST_IDS } from "@berth/console/test-ids/log-viewer";
import { SESSION_TEST_IDS as S } from "@berth/console/test-ids/session";
import { SHELL_TEST_IDS } from "@berth/console/test-ids/shell";
import type { Page } from "playwright-core";
import { MonitoringPanel } from "./monitoring-panel.ts";

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
