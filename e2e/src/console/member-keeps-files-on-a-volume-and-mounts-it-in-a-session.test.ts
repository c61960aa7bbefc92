// Journey on the whole path (Postgres, API, worker, operators, two GPU clusters with the bed's storage
// driver stand-in): a super_admin adds the shared pool on the Pools page and watches its reading come
// from the storage driver (csi); a member creates a volume on the Volumes page, grows it, deletes it and
// undoes the delete; picks it in the new-session wizard (storage priced in the cost), and sees it mounted
// on the session's page and its claim bound to the cluster the session landed on; a colleague it is shared
// with read-only sees it marked and mounts it read-only. axe checks each page.

import { ensureConsoleBuilt } from "@berth/console";
import { TEST_IDS } from "@berth/console/test-ids";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type SessionsBed, startSessionsBed } from "../sessions/harness.ts";
import { type BedProvisioner, installBedStorage, startProvisioner } from "../storage/bed-storage.ts";
import { closeBrowser, expectAccessible, launchBrowser, Screenshots } from "./browser.ts";
import { Visitors } from "./pages/login-page.ts";
import { NewSessionPage, SessionPage } from "./pages/sessions-pages.ts";

vi.setConfig({ testTimeout: 120_000 });

const CLASS = "berth-shared";
let bed: SessionsBed;
let browser: Browser;
const provisioners: BedProvisioner[] = [];
const people = new Visitors(
  () => browser,
  () => bed.t.api.url,
);
const shots = new Screenshots("volumes");

beforeAll(async () => {
  ensureConsoleBuilt();
  bed = await startSessionsBed({ operatorStorageIntervalMs: 300 });
  for (const name of ["gpu-a", "gpu-b"]) {
    const c = bed.fleet.cluster(name);
    await installBedStorage(c, { storageClass: CLASS, capacityGb: 800 });
    provisioners.push(startProvisioner(c, { storageClass: CLASS }));
  }
  browser = await launchBrowser();
}, 300_000);
afterEach(async (ctx) => shots.onFailure(people.current, ctx));
afterAll(async () => {
  await people.closeAll();
  await closeBrowser(browser);
  for (const p of provisioners) await p.stop();
  await bed?.stop();
});

describe("volumes in the console", () => {
  let alice: Page;
  let volumeId = "";

  it("a super_admin adds the shared pool and sees its capacity read from the storage driver", async () => {
    const admin = await people.signIn(bed.superAdmin);
    await admin.getByTestId(TEST_IDS.shell.adminMenu).click();
    await admin.getByRole("link", { name: "Storage pools", exact: true }).click();
    await admin.getByRole("heading", { name: "Storage pools", level: 1 }).waitFor();
    await admin.getByText("No pool yet").waitFor();
    await admin.getByLabel("Name", { exact: true }).fill("shared");
    await admin.getByLabel("Storage server's cluster").selectOption(bed.gpu["gpu-a"]?.id as string);
    await admin.getByLabel("Storage class").fill(CLASS);
    await admin.getByRole("button", { name: "Add pool" }).click();
    const row = admin.locator('[data-testid="pool-row"][data-pool="shared"]');
    await row.waitFor();
    // The operator of gpu-a reports the class's CSIStorageCapacity on its next tick: reload until it shows.
    await expect
      .poll(
        async () => {
          await admin.reload();
          await row.waitFor();
          // Read without waiting: before the first report the row has no source, and a waiting read would
          // hold this poll past its own timeout.
          const source = row.getByTestId("pool-source");
          return (await source.count()) > 0 ? await source.textContent() : "";
        },
        { timeout: 20_000, interval: 500 },
      )
      .toContain("csi");
    expect(await row.getByTestId("pool-capacity").textContent()).toContain("800 of 800 GB free");
    expect(await row.getByTestId("pool-via").textContent()).toContain("csi_capacity");
    await shots.take(admin, "pools");
    await expectAccessible(admin, "pools");
  });

  it("a member creates a volume, grows it, deletes it and undoes the delete", async () => {
    alice = await people.signIn(bed.alice);
    await alice.getByRole("link", { name: "Volumes", exact: true }).click();
    await alice.getByRole("heading", { name: "Volumes", level: 1 }).waitFor();
    await alice.getByText("No volume yet").waitFor();
    await expectAccessible(alice, "empty volumes");
    await alice.getByLabel("Name", { exact: true }).fill("datasets");
    await alice.getByLabel("Size (GB)", { exact: true }).fill("10");
    await alice.getByRole("button", { name: "Create volume" }).click();
    const row = alice.locator('[data-testid="volume-row"]').filter({ hasText: "datasets" });
    await row.waitFor();
    volumeId = (await row.getAttribute("data-volume-id")) as string;
    expect(await row.getByTestId("volume-size").textContent()).toContain("10 GB");
    expect(await row.getByTestId("volume-bound").textContent()).toContain("not bound");

    await alice.getByRole("button", { name: "Edit datasets" }).click();
    await alice.getByLabel("Size (GB, grow only)").fill("15");
    await alice.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => row.getByTestId("volume-size").textContent()).toContain("15 GB");

    await alice.getByRole("button", { name: "Delete datasets" }).click();
    await alice.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
    const deleted = alice.locator(`[data-testid="deleted-volume-row"][data-volume-id="${volumeId}"]`);
    await deleted.waitFor();
    await shots.take(alice, "volume-deleted");
    await expectAccessible(alice, "deleted volume");
    await alice.getByRole("button", { name: "Undo delete of datasets" }).click();
    await row.waitFor();
    await deleted.waitFor({ state: "detached" });
    await shots.take(alice, "volumes");
  });

  it("the wizard mounts it, prices its storage, and the session's page shows the mount and where the claim is", async () => {
    const wizard = new NewSessionPage(alice);
    // Through the app's own link (no full page load: the live feed's stream stays as it is).
    await alice.getByRole("link", { name: "Sessions", exact: true }).click();
    await alice.getByTestId("new-session").click();
    await alice.getByTestId("create-session-form").waitFor({ timeout: 60_000 });
    await wizard.chooseOffering("h100");
    const choice = alice.locator(`[data-testid="volume-choice"][data-volume-id="${volumeId}"]`);
    await choice.getByRole("checkbox").first().check();
    await expect.poll(() => alice.getByTestId("cost-storage").textContent()).toContain("15 GB");
    expect(await alice.getByLabel("Mount at").inputValue()).toBe("/home/jovyan/datasets");
    await shots.take(alice, "wizard-volumes");
    await expectAccessible(alice, "wizard with a volume");
    const id = await wizard.create("with-data");
    const detail = new SessionPage(alice);
    await detail.waitForPhase("Running", 60_000);
    const mount = alice.locator(`[data-testid="session-mount"][data-volume-id="${volumeId}"]`);
    await mount.waitFor();
    expect(await mount.textContent()).toContain("/home/jovyan/datasets");
    await shots.take(alice, "session-mounts");
    await expectAccessible(alice, "session with a volume");

    const session = (await bed.call(bed.alice, "GET", `/api/v1/sessions/${id}`)).body;
    await alice.getByRole("link", { name: "Volumes", exact: true }).click();
    const row = alice.locator(`[data-testid="volume-row"][data-volume-id="${volumeId}"]`);
    await expect.poll(() => row.getByTestId("volume-bound").textContent()).toContain(`claim on ${session.cluster_id}`);
    // Mounted: the delete is refused with the session named.
    await alice.getByRole("button", { name: "Delete datasets" }).click();
    await alice.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
    await alice.getByText("mounted by 1 session").waitFor();
  });

  it("a colleague the volume is shared with read-only sees it marked in their list and in the wizard, where it mounts read-only", async () => {
    const shared = await bed.call(bed.alice, "PUT", `/api/v1/storage/volumes/${volumeId}/shares`, {
      shares: [{ kind: "user", id: bed.bob.id, access: "read_only" }],
    });
    expect(shared.status, JSON.stringify(shared.body)).toBe(200);
    const bob = await people.signIn(bed.bob);
    await bob.getByRole("link", { name: "Volumes", exact: true }).click();
    const row = bob.locator(`[data-testid="volume-row"][data-volume-id="${volumeId}"]`);
    await row.waitFor();
    expect(await row.getByTestId("volume-shared").textContent()).toContain("Shared with you · read-only");
    expect(await row.getByRole("button", { name: "Delete datasets" }).count()).toBe(0);
    await expectAccessible(bob, "volumes shared with the member");

    await bob.getByRole("link", { name: "Sessions", exact: true }).click();
    await bob.getByTestId("new-session").click();
    await bob.getByTestId("create-session-form").waitFor({ timeout: 60_000 });
    await new NewSessionPage(bob).chooseOffering("h100");
    const choice = bob.locator(`[data-testid="volume-choice"][data-volume-id="${volumeId}"]`);
    expect(await choice.getByTestId("volume-shared").textContent()).toContain("read-only");
    await choice.getByRole("checkbox").first().check();
    const readOnly = choice.getByRole("checkbox", { name: "read-only" });
    expect(await readOnly.isChecked()).toBe(true);
    expect(await readOnly.isDisabled()).toBe(true);
    await shots.take(bob, "wizard-shared-volume");
    await expectAccessible(bob, "wizard with a shared volume");
  });
});
