// Page object of the administrators' fair-share page (console/src/views/fair-share-view/): the shares per
// organization, project and user and GPU model, and the reclaim log.
import { FAIR_SHARE_TEST_IDS as T } from "@berth/console/test-ids/fair-share";
import { SHELL_TEST_IDS } from "@berth/console/test-ids/shell";
import type { Page } from "playwright-core";
import { Shell } from "./shell.ts";

export interface ShareFigures {
  level: string;
  id: string;
  model: string;
  guaranteed: number;
  used: number;
  borrowed: number;
  lent: number;
}

export class FairSharePage {
  readonly page: Page;
  readonly shell: Shell;
  constructor(page: Page) {
    this.page = page;
    this.shell = new Shell(page);
  }

  /** From the Admin menu, as an administrator finds it. */
  async openFromMenu(): Promise<void> {
    await this.shell.openAdmin("Fair share");
  }

  async reload(): Promise<void> {
    await this.page.reload();
    await this.page.getByRole("heading", { name: "Fair share", level: 1 }).waitFor();
  }

  /** Every share row's figures, in the page's order (organization, then each project and its users). */
  rows(): Promise<ShareFigures[]> {
    return this.page.getByTestId(T.row).evaluateAll((rows) =>
      rows.map((r) => {
        const n = (k: string) => Number(r.getAttribute(`data-${k}`));
        return {
          level: r.getAttribute("data-level") ?? "",
          id: r.getAttribute("data-id") ?? "",
          model: r.getAttribute("data-model") ?? "",
          guaranteed: n("guaranteed"),
          used: n("used"),
          borrowed: n("borrowed"),
          lent: n("lent"),
        };
      }),
    );
  }

  organizations() {
    return this.page.getByTestId(T.organization);
  }

  /** The reclaim log's rows: the reclaimed session, the one it was for, and where it stands. */
  reclaims(): Promise<{ session: string; for: string; state: string; text: string }[]> {
    return this.page.getByTestId(T.reclaimRow).evaluateAll((rows) =>
      rows.map((r) => ({
        session: r.getAttribute("data-session") ?? "",
        for: r.getAttribute("data-for") ?? "",
        state: r.getAttribute("data-state") ?? "",
        text: r.textContent ?? "",
      })),
    );
  }

  /** The empty states on the page ("No reclaim yet", …), by heading. */
  emptyHeadings(): Promise<string[]> {
    return this.page
      .getByTestId(SHELL_TEST_IDS.emptyState)
      .evaluateAll((els) => els.map((e) => e.querySelector(".title")?.textContent?.trim() ?? ""));
  }
}
