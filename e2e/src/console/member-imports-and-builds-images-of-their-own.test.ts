// Journey: a member opens Images, imports an image from the public registry's stand-in (a two-platform
// index behind an anonymous token flow), watches its progress turn Ready live, finds it tagged "Yours" in
// the new-session wizard, sees an unparseable reference explained, deletes it, then builds one from a
// Dockerfile and follows its log live until it succeeds (kwok runs the Job on the build cluster; the
// test pushes the image as the builder would and prints its digest into the log kwok serves). axe-core checks the
// page in each state. Real parts: the bed's management cluster, two OCI registries, Postgres, the API, the
// worker's import and build loops, the build cluster's operator side (ImageBuild → Job, reports over the
// internal plane), Chromium.

import { appendFileSync } from "node:fs";
import { join } from "node:path";
import {
  BuildLoop,
  type BuildOperator,
  type IdentityTestApi,
  ImportLoop,
  installBuildsOn,
  installDefaultCatalog,
  startBuildOperator,
  startIdentityTestApi,
  type TestUser,
} from "@berth/api/testing";
import { ensureConsoleBuilt } from "@berth/console";
import { HttpKube } from "@berth/controllers/kube";
import { loadCrds } from "@berth/crds/manifests";
import { ApiextensionsV1Api } from "@kubernetes/client-node";
import pino from "pino";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startFleet } from "../index.ts";
import { pushImage, pushIndex } from "../testbed/images.ts";
import { kubeConfigFrom } from "../testbed/kubeconfig.ts";
import { criLogLines } from "../testbed/kwok.ts";
import { type LocalRegistry, startRegistry, startTokenGate, type TokenGate } from "../testbed/registry.ts";
import type { Fleet } from "../testbed/types.ts";
import { closeBrowser, closeContexts, expectAccessible, launchBrowser, newContext, Screenshots } from "./browser.ts";
import { ImagesPage } from "./pages/images-page.ts";
import { LoginPage } from "./pages/login-page.ts";
import { NewSessionPage } from "./pages/new-session-page.ts";

describe("a member brings an image of their own", () => {
  let fleet: Fleet;
  let kube: HttpKube;
  let source: LocalRegistry;
  let target: LocalRegistry;
  let gate: TokenGate;
  let t: IdentityTestApi;
  let loop: ImportLoop;
  let builds: BuildLoop;
  let buildKube: HttpKube;
  let operator: BuildOperator;
  let orgId = "";
  let browser: Browser;
  let member: TestUser;
  let page: Page;
  let images: ImagesPage;
  const contexts: BrowserContext[] = [];
  const shots = new Screenshots("images");

  beforeAll(async () => {
    ensureConsoleBuilt();
    [fleet, source, target] = await Promise.all([
      startFleet({
        clusters: [
          { name: "mgmt", kind: "management" },
          { name: "build", kind: "gpu", nodes: [] },
        ],
      }),
      startRegistry({ name: "public" }),
      startRegistry({ name: "berth" }),
    ]);
    gate = await startTokenGate(source.url);
    const kc = kubeConfigFrom(fleet.cluster("mgmt").kubeconfig);
    const ext = kc.makeApiClient(ApiextensionsV1Api);
    for (const crd of loadCrds()) await ext.createCustomResourceDefinition({ body: crd as never });
    kube = new HttpKube(kc);
    await installDefaultCatalog(kube);
    t = await startIdentityTestApi({
      kubeConfig: kc,
      env: { BERTH_REGISTRY_URL: target.url, BERTH_IMAGE_INTERNAL_REGISTRIES: gate.host },
    });
    loop = new ImportLoop({
      db: t.database.db,
      kube,
      config: t.deps.config.images as NonNullable<typeof t.deps.config.images>,
      log: pino({ level: "silent" }),
      intervalMs: 300,
    });
    loop.start();
    buildKube = new HttpKube(kubeConfigFrom(fleet.cluster("build").kubeconfig));
    const cpu = { cpu: "16", memory: "64Gi", pods: "110", "ephemeral-storage": "500Gi" };
    await buildKube.json("POST", "/api/v1/nodes", {
      body: {
        apiVersion: "v1",
        kind: "Node",
        metadata: { name: "cpu-0", annotations: { "kwok.x-k8s.io/node": "fake" }, labels: { type: "kwok" } },
        spec: { providerID: "kwok://cpu-0" },
        status: { capacity: cpu, allocatable: cpu, phase: "Pending" },
      },
    });
    await t.database.db("clusters").insert({ id: "clu_journeybuild", name: "build", session_domain: "build.bed.test" });
    await t.database
      .db("build_clusters")
      .insert({ cluster_id: "clu_journeybuild", marked_by: "test", marked_at: new Date() });
    await installBuildsOn(buildKube, "berth-builds");
    operator = await startBuildOperator({
      deps: t.deps,
      clusterId: "clu_journeybuild",
      kubeConfig: kubeConfigFrom(fleet.cluster("build").kubeconfig),
      log: pino({ level: "silent" }),
    });
    builds = new BuildLoop({
      db: t.database.db,
      kube,
      config: t.deps.config.images as NonNullable<typeof t.deps.config.images>,
      log: pino({ level: "silent" }),
      clusterClient: async () => buildKube,
      intervalMs: 300,
    });
    builds.start();
    const org = await t.anOrganization("Lab");
    orgId = org.id;
    member = await t.aUser({ email: `researcher-${Date.now()}@lab.test` });
    await t.member(member, org.id, null, "member");
    await pushIndex(source.url, "team/notebook", "2026.11", ["linux/amd64", "linux/arm64"]);
    browser = await launchBrowser();
    const context = await newContext(browser, t.api.url);
    contexts.push(context);
    page = await context.newPage();
    const login = new LoginPage(page);
    await login.open();
    await login.signIn(member.email, member.password);
    images = new ImagesPage(page);
    await images.shell.accountMenu().waitFor();
  }, 180_000);
  afterEach(async (ctx) => shots.onFailure(page, ctx));
  afterAll(async () => {
    await closeContexts(contexts);
    await closeBrowser(browser);
    await loop?.stop();
    await builds?.stop();
    await operator?.stop();
    buildKube?.close();
    await t?.stop();
    kube?.close();
    await gate?.stop();
    await Promise.all([fleet?.stop(), source?.stop(), target?.stop()]);
  });

  it("imports from a public registry and watches it become ready", async () => {
    await images.openFromNav();
    await images.shell.sees("No image of your own yet");
    await expectAccessible(page, "empty");
    await images.importImage(`${gate.host}/team/notebook:2026.11`, "code-server");
    await images.shell.sees(/Importing .*team\/notebook:2026\.11/);
    const row = images.myImage();
    await expect.poll(() => row.getAttribute("data-state"), { timeout: 30_000 }).toBe("ready");
    expect(await images.myImageState().textContent()).toBe("Ready");
    expect(await row.textContent()).toContain("@sha256:");
    await images.shell.sees("1 of 20 private images used");
    // The bell rings with the import's end, without a reload.
    await expect.poll(() => images.shell.notificationCount().textContent(), { timeout: 10_000 }).toBe("1");
    await shots.take(page, "ready");
    await expectAccessible(page, "ready");
  });

  it("finds it as their own in the new-session wizard", async () => {
    await page.goto(`${t.api.url}/sessions/new`);
    await new NewSessionPage(page).yoursBadge().waitFor();
  });

  it("sees an unparseable reference explained, and nothing added", async () => {
    await images.open(t.api.url);
    await images.myImage().waitFor();
    await images.importImage("me:secret@ghcr.io/org/app:1");
    await images.shell.seesFirst("must not carry credentials");
    expect(await images.myImageRows().count()).toBe(1);
  });

  it("deletes it after confirming", async () => {
    await images.deleteImage(await images.myImageName());
    await images.shell.sees("No image of your own yet");
  });

  it("builds one from a Dockerfile and follows its log until it succeeds", async () => {
    const pushed = await pushImage(target.url, `${orgId}/${member.id}/built`, "latest");
    appendFileSync(join(fleet.dataDir, "build", "pod-log.cri"), criLogLines([`BERTH_IMAGE_DIGEST=${pushed.digest}`]));
    await images.build("FROM scratch\nCOPY model.bin /\n", "built");
    await images.shell.sees("Build queued: its log follows below.");
    await images.buildLogShows("berth test bed: container started", 30_000);
    await images.buildEndsWith("Build succeeded", 30_000);
    await expect.poll(() => images.myImage().getAttribute("data-state")).toBe("ready");
    await shots.take(page, "built");
    await expectAccessible(page, "built");
    // The build's end is in the bell too (beside the import's), and leads back to the Images page.
    await expect.poll(() => images.shell.notificationCount().textContent(), { timeout: 10_000 }).toBe("2");
    await images.shell.openBell();
    await images.shell.notificationLink("image_build.finished", "Image build succeeded").waitFor();
    expect(await images.shell.notificationLink("image_build.finished").getAttribute("href")).toBe("/images");
    await expectAccessible(page, "bell");
  });
});
