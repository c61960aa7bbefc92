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
import { LoginPage } from "./pages/login-page.ts";

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
    await page.getByTestId("account-menu").waitFor();
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
    await page.getByRole("link", { name: "Images", exact: true }).click();
    await page.getByRole("heading", { name: "Images", level: 1 }).waitFor();
    await page.getByText("No image of your own yet").waitFor();
    await expectAccessible(page, "empty");
    await page.getByLabel("Image reference").fill(`${gate.host}/team/notebook:2026.11`);
    await page.getByTestId("import-form").getByLabel("Opens as").selectOption("code-server");
    await page.getByRole("button", { name: "Import", exact: true }).click();
    await page.getByText(/Importing .*team\/notebook:2026\.11/).waitFor();
    const row = page.getByTestId("my-image-row").first();
    await expect.poll(() => row.getAttribute("data-state"), { timeout: 30_000 }).toBe("ready");
    expect(await row.getByTestId("my-image-state").textContent()).toBe("Ready");
    expect(await row.textContent()).toContain("@sha256:");
    await page.getByText("1 of 20 private images used").waitFor();
    // The bell rings with the import's end, without a reload.
    await expect.poll(() => page.getByTestId("notification-count").textContent(), { timeout: 10_000 }).toBe("1");
    await shots.take(page, "ready");
    await expectAccessible(page, "ready");
  });

  it("finds it as their own in the new-session wizard", async () => {
    await page.goto(`${t.api.url}/sessions/new`);
    await page.getByTestId("image-yours").first().waitFor();
  });

  it("sees an unparseable reference explained, and nothing added", async () => {
    await page.goto(`${t.api.url}/images`);
    await page.getByTestId("my-image-row").first().waitFor();
    await page.getByLabel("Image reference").fill("me:secret@ghcr.io/org/app:1");
    await page.getByRole("button", { name: "Import", exact: true }).click();
    await page.getByText("must not carry credentials").first().waitFor();
    expect(await page.getByTestId("my-image-row").count()).toBe(1);
  });

  it("deletes it after confirming", async () => {
    const name = (await page.getByTestId("my-image-row").first().locator("strong").textContent()) ?? "";
    await page.getByRole("button", { name: `Delete ${name}` }).click();
    await page.getByTestId("confirm-dialog").waitFor();
    await page.getByTestId("confirm-ok").click();
    await page.getByText("No image of your own yet").waitFor();
  });

  it("builds one from a Dockerfile and follows its log until it succeeds", async () => {
    const pushed = await pushImage(target.url, `${orgId}/${member.id}/built`, "latest");
    appendFileSync(join(fleet.dataDir, "build", "pod-log.cri"), criLogLines([`BERTH_IMAGE_DIGEST=${pushed.digest}`]));
    await page.getByLabel(/^Dockerfile/).fill("FROM scratch\nCOPY model.bin /\n");
    await page.getByLabel("Name", { exact: true }).fill("built");
    await page.getByRole("button", { name: "Build", exact: true }).click();
    await page.getByText("Build queued: its log follows below.").waitFor();
    await page.getByTestId("build-log").getByText("berth test bed: container started").waitFor({ timeout: 30_000 });
    await page.getByTestId("build-log-end").getByText("Build succeeded").waitFor({ timeout: 30_000 });
    await expect.poll(() => page.getByTestId("my-image-row").first().getAttribute("data-state")).toBe("ready");
    await shots.take(page, "built");
    await expectAccessible(page, "built");
    // The build's end is in the bell too (beside the import's), and leads back to the Images page.
    await expect.poll(() => page.getByTestId("notification-count").textContent(), { timeout: 10_000 }).toBe("2");
    await page.getByTestId("notification-bell").click();
    const item = page.locator('[data-testid="notification-item"][data-kind="image_build.finished"]');
    await item.getByRole("link", { name: "Image build succeeded" }).waitFor();
    expect(await item.getByRole("link").getAttribute("href")).toBe("/images");
    await expectAccessible(page, "bell");
  });
});
