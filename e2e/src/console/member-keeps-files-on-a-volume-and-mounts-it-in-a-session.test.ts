// Journey on the whole path (Postgres, API, worker, operators, two GPU clusters with the bed's storage
// driver stand-in): a super_admin adds the shared pool on the Pools page and watches its reading come
// from the storage driver (csi); a member creates a volume on the Volumes page, grows it, deletes it and
// undoes the delete; picks it in the new-session wizard (storage priced in the cost), and sees it mounted
// on the session's page and its claim bound to the cluster the session landed on; a colleague it is shared
// with read-only sees it marked and mounts it read-only. axe checks each page.

import { ensureConsoleBuilt } from "@berth/console";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { bedApi } from "../api-client.ts";
import { type SessionsBed, startSessionsBed } from "../sessions/harness.ts";
import { type BedProvisioner, installBedStorage, startProvisioner } from "../storage/bed-storage.ts";
import { closeBrowser, expectAccessible, launchBrowser, Screenshots } from "./browser.ts";
import { NewSessionPage } from "./pages/new-session-page.ts";
import { PoolsPage } from "./pages/pools-page.ts";
import { SessionPage } from "./pages/session-page.ts";
import { Visitors } from "./pages/visitors.ts";
import { VolumesPage } from "./pages/volumes-page.ts";

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
    const pools = new PoolsPage(admin);
    await pools.openFromMenu();
    await pools.noPool().waitFor();
    await pools.add({ name: "shared", clusterId: bed.gpu["gpu-a"]?.id as string, storageClass: CLASS });
    const row = pools.row("shared");
    await row.waitFor();
    // The operator of gpu-a reports the class's CSIStorageCapacity on its next tick: reload until it shows.
    await expect
      .poll(
        async () => {
          await admin.reload();
          await row.waitFor();
          // Read without waiting: before the first report the row has no source, and a waiting read would
          // hold this poll past its own timeout.
          return pools.sourceNow("shared");
        },
        { timeout: 20_000, interval: 500 },
      )
      .toContain("csi");
    expect(await pools.capacity("shared")).toContain("800 of 800 GB free");
    expect(await pools.via("shared")).toContain("csi_capacity");
    await shots.take(admin, "pools");
    await expectAccessible(admin, "pools");
  });

  it("a member creates a volume, grows it, deletes it and undoes the delete", async () => {
    alice = await people.signIn(bed.alice);
    const volumes = new VolumesPage(alice);
    await volumes.openFromNavigation();
    await volumes.heading().waitFor();
    await volumes.noVolume().waitFor();
    await expectAccessible(alice, "empty volumes");
    await volumes.create("datasets", "10");
    const row = volumes.rowNamed("datasets");
    await row.waitFor();
    volumeId = (await row.getAttribute("data-volume-id")) as string;
    expect(await volumes.size(volumeId)).toContain("10 GB");
    expect(await volumes.bound(volumeId)).toContain("not bound");

    await volumes.grow("datasets", "15");
    await expect.poll(() => volumes.size(volumeId)).toContain("15 GB");

    await volumes.delete("datasets");
    const deleted = volumes.deletedRow(volumeId);
    await deleted.waitFor();
    await shots.take(alice, "volume-deleted");
    await expectAccessible(alice, "deleted volume");
    await volumes.undoDelete("datasets");
    await row.waitFor();
    await deleted.waitFor({ state: "detached" });
    await shots.take(alice, "volumes");
  });

  it("the wizard mounts it, prices its storage, and the session's page shows the mount and where the claim is", async () => {
    const wizard = new NewSessionPage(alice);
    // Through the app's own link (no full page load: the live feed's stream stays as it is).
    await wizard.openFromSessions(60_000);
    await wizard.chooseOffering("h100");
    await wizard.mountVolume(volumeId);
    await expect.poll(() => wizard.costStorage()).toContain("15 GB");
    expect(await wizard.mountPath()).toBe("/home/jovyan/datasets");
    await shots.take(alice, "wizard-volumes");
    await expectAccessible(alice, "wizard with a volume");
    const id = await wizard.create("with-data");
    const detail = new SessionPage(alice);
    await detail.waitForPhase("Running", 60_000);
    const mount = detail.mount(volumeId);
    await mount.waitFor();
    expect(await mount.textContent()).toContain("/home/jovyan/datasets");
    await shots.take(alice, "session-mounts");
    await expectAccessible(alice, "session with a volume");

    const session = await bedApi(bed, bed.alice).call("getSession", { params: { sessionId: id } });
    const volumes = new VolumesPage(alice);
    await volumes.openFromNavigation();
    await expect.poll(() => volumes.bound(volumeId)).toContain(`claim on ${session.cluster_id}`);
    // Mounted: the delete is refused with the session named.
    await volumes.delete("datasets");
    await volumes.shell.sees("mounted by 1 session");
  });

  it("a colleague the volume is shared with read-only sees it marked in their list and in the wizard, where it mounts read-only", async () => {
    await bedApi(bed, bed.alice).call("setVolumeShares", {
      params: { volumeId },
      body: { shares: [{ kind: "user", id: bed.bob.id, access: "read_only" }] },
    });
    const bob = await people.signIn(bed.bob);
    const volumes = new VolumesPage(bob);
    await volumes.openFromNavigation();
    await volumes.row(volumeId).waitFor();
    expect(await volumes.shared(volumeId)).toContain("Shared with you · read-only");
    expect(await volumes.deleteButton("datasets").count()).toBe(0);
    await expectAccessible(bob, "volumes shared with the member");

    const wizard = new NewSessionPage(bob);
    await wizard.openFromSessions(60_000);
    await wizard.chooseOffering("h100");
    expect(await wizard.volumeShared(volumeId)).toContain("read-only");
    await wizard.mountVolume(volumeId);
    const readOnly = wizard.volumeReadOnly(volumeId);
    expect(await readOnly.isChecked()).toBe(true);
    expect(await readOnly.isDisabled()).toBe(true);
    await shots.take(bob, "wizard-shared-volume");
    await expectAccessible(bob, "wizard with a shared volume");
  });
});
