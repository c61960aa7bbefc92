// Page object of the queue (console/src/views/queue-view/).
import { QUEUE_TEST_IDS } from "@berth/console/test-ids/queue";
import type { Page } from "playwright-core";

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
