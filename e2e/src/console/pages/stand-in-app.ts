// Page object of the stand-in application a session serves on the bed (operator/src/standin/standin.ts):
// the page a connect link lands on through the cluster's gateway, and its WebSocket's echo.
import type { Page } from "playwright-core";

export class StandInApp {
  readonly page: Page;
  constructor(page: Page) {
    this.page = page;
  }
  /** Its main element; data-cr is the session's resource name, data-app the application. */
  root() {
    return this.page.getByTestId("standin-app");
  }
  /** Its heading: the application it stands in for ("JupyterLab"). */
  title() {
    return this.page.textContent("h1");
  }
  /** What its WebSocket answered ("echo: ping" once the round trip through the gateway is done). */
  wsEcho() {
    return this.page.textContent('[data-testid="standin-ws"]');
  }
}
