// Journey on the whole path (Postgres, API, worker with its snapshot loop, operators, a GPU cluster that
// serves the CSI snapshot API and the bed's storage stand-in): a member takes a snapshot of a volume on the
// Volumes page, sees it creating until the cluster says it is ready, restores it into a new volume, and
// deletes it. The bed runs no snapshot controller: where this journey writes the VolumeSnapshot's status
// it plays that controller (docs/dev/storage.md, "Snapshots"). axe checks the page with the panel open.

import { copyFileSync, mkdirSync } from "node:fs";
import { ensureConsoleBuilt } from "@berth/console";
import { HttpKube } from "@berth/controllers/kube";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { bedApi } from "../api-client.ts";
import { type SessionsBed, startSessionsBed } from "../sessions/harness.ts";
import { type BedProvisioner, installBedStorage, startProvisioner } from "../storage/bed-storage.ts";
import { installSnapshotCrds } from "../storage/snapshot-crds.ts";
import { kubeConfigFrom } from "../testbed/index.ts";
import { closeBrowser, expectAccessible, launchBrowser, Screenshots } from "./browser.ts";
import { Visitors } from "./pages/visitors.ts";
import { VolumeSnapshotsPanel } from "./pages/volume-snapshots-panel.ts";
import { VolumesPage } from "./pages/volumes-page.ts";

vi.setConfig({ testTimeout: 240_000 });

const CLASS = "berth-shared";
const NS = "berth-sessions";
let bed: SessionsBed;
let browser: Browser;
let gpu: HttpKube;
let provisioner: BedProvisioner;
const people = new Visitors(
  () => browser,
  () => bed.t.api.url,
);
const shots = new Screenshots("snapshots");
/** Pictures a person looks at, beside the run's artefacts (env BERTH_SHOTS_DIR). */
const keep = (file: string, name: string) => {
  const dir = process.env.BERTH_SHOTS_DIR;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  copyFileSync(file, `${dir}/snap-${name}.png`);
};

beforeAll(async () => {
  ensureConsoleBuilt();
  bed = await startSessionsBed({ operatorStorageIntervalMs: 300 });
  const c = bed.fleet.cluster("gpu-a");
  await installBedStorage(c, { storageClass: CLASS, capacityGb: 800 });
  await installSnapshotCrds(c);
  provisioner = startProvisioner(c, { storageClass: CLASS });
  gpu = new HttpKube(kubeConfigFrom(c.kubeconfig));
  await bedApi(bed, bed.superAdmin).call("createStoragePool", {
    body: { name: "shared", cluster: bed.gpu["gpu-a"]?.id as string, storage_class: CLASS, manual_capacity_gb: 800 },
  });
  browser = await launchBrowser();
}, 300_000);
afterEach(async (ctx) => shots.onFailure(people.current, ctx));
afterAll(async () => {
  await people.closeAll();
  await closeBrowser(browser);
  await provisioner?.stop();
  gpu?.close();
  await bed?.stop();
});

describe("volume snapshots in the console", () => {
  let alice: Page;

  it("a member takes a snapshot, sees it ready once the cluster says so, restores it and deletes it", async () => {
    alice = await people.signIn(bed.alice);
    const volumes = new VolumesPage(alice);
    await volumes.openFromNavigation();
    await volumes.heading().waitFor();
    await volumes.create("results", "1");
    await volumes.rowNamed("results").first().waitFor();

    const snaps = new VolumeSnapshotsPanel(alice, "results");
    await snaps.open();
    await snaps.none().waitFor();
    await snaps.take("before-tuning");
    expect(await snaps.state("before-tuning")).toBe("creating");
    const id = await snaps.idOf("before-tuning");
    keep(await shots.take(alice, "creating"), "creating");

    // The worker makes the VolumeSnapshot on gpu-a; the controller (played here) says it is ready.
    const path = `/apis/snapshot.storage.k8s.io/v1/namespaces/${NS}/volumesnapshots/berth-${id.replace("_", "-")}`;
    await expect.poll(async () => (await gpu.request("GET", path)).status, { timeout: 30_000 }).toBe(200);
    const ready = await gpu.request("PATCH", `${path}/status`, {
      body: { status: { readyToUse: true, restoreSize: "1Gi", creationTime: new Date().toISOString() } },
    });
    expect(ready.status).toBe(200);
    await expect
      .poll(
        async () => {
          await alice.reload();
          await snaps.open();
          return snaps.state("before-tuning");
        },
        { timeout: 30_000, interval: 1_000 },
      )
      .toBe("ready");
    keep(await shots.take(alice, "ready"), "ready");
    await expectAccessible(alice, "snapshots");

    await snaps.restore("before-tuning", "results-before-tuning");
    await expect
      .poll(() => snaps.notice().textContent())
      .toContain("restored into the new volume results-before-tuning");
    await volumes.rowNamed("results-before-tuning").waitFor();
    keep(await shots.take(alice, "restored"), "restored");

    // Deleted once the new volume has its data (the worker saw its claim bind); then the row goes.
    const copyId = (await volumes.rowNamed("results-before-tuning").getAttribute("data-volume-id")) as string;
    await expect
      .poll(async () => (await bedApi(bed, bed.alice).call("getVolume", { params: { volumeId: copyId } })).restoring, {
        timeout: 30_000,
        interval: 500,
      })
      .toBe(false);
    await snaps.delete("before-tuning");
    await expect.poll(() => snaps.notice().textContent()).toContain("is being deleted");
    await expect
      .poll(
        async () => {
          await alice.reload();
          await snaps.open();
          return snaps.row("before-tuning").count();
        },
        { timeout: 30_000, interval: 1_000 },
      )
      .toBe(0);
    keep(await shots.take(alice, "deleted"), "deleted");
  });
});
