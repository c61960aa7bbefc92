// Page object of the new-session wizard (console/src/views/session-new-view/).
import { NEW_SESSION_TEST_IDS as W } from "@berth/console/test-ids/new-session";
import { SESSIONS_TEST_IDS } from "@berth/console/test-ids/sessions";
import type { Page } from "playwright-core";

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
