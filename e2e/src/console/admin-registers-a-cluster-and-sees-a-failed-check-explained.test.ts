// Journey: an administrator registers GPU clusters from the console. A cluster without the GPU runtime
// class is refused and the console shows the probe's result check by check, with the failed one
// explained; a complete cluster is accepted and its operator token shown once; on its page the admin
// runs the connection test, edits the session domain, and finds deregistration guarded by its name.

import { ensureConsoleBuilt } from "@berth/console";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type ClustersBed, startClustersBed } from "../clusters/harness.ts";
import { closeBrowser, expectAccessible, launchBrowser, newContext, PHONE, Screenshots } from "./browser.ts";
import { ClustersPage } from "./pages/clusters-page.ts";
import { DirectoryPages } from "./pages/directory-pages.ts";
import { LoginPage } from "./pages/login-page.ts";
import { Shell } from "./pages/shell.ts";

describe("an administrator registers a cluster in the console", () => {
  let bed: ClustersBed;
  let browser: Browser;
  let page: Page;
  const shots = new Screenshots("admin-registers-cluster");

  beforeAll(async () => {
    ensureConsoleBuilt();
    bed = await startClustersBed({
      clusters: [
        { name: "mgmt", kind: "management" },
        {
          name: "gpu-ok",
          kind: "gpu",
          nodes: [{ name: "ok-1", gpuModel: "NVIDIA-L4", gpuCount: 4 }],
          gpuRuntimeClass: true,
          gpuDevicePlugin: true,
        },
        {
          name: "gpu-noruntime",
          kind: "gpu",
          nodes: [{ name: "nr-1", gpuModel: "NVIDIA-L4", gpuCount: 4 }],
          gpuRuntimeClass: false,
          gpuDevicePlugin: true,
        },
      ],
    });
    browser = await launchBrowser();
    page = await (await newContext(browser, bed.t.api.url)).newPage();
    const login = new LoginPage(page);
    await login.open();
    await login.signIn(bed.superAdmin.email, bed.superAdmin.password);
    await new Shell(page).signedIn();
  });
  afterEach(async (ctx) => shots.onFailure(page, ctx));
  afterAll(async () => {
    await closeBrowser(browser);
    await bed?.stop();
  });

  it("an empty fleet says what to do", async () => {
    const clusters = new ClustersPage(page);
    await clusters.open();
    await clusters.shell.emptyState().waitFor();
    await shots.take(page, "empty-fleet");
    await expectAccessible(page);
  });

  it("a cluster without the GPU runtime class is refused, and the failed check is explained", async () => {
    const clusters = new ClustersPage(page);
    await clusters.register("no-runtime", "127.0.0.1:9999", await bed.credentialFor("gpu-noruntime"));
    await clusters.refused().waitFor({ timeout: 30_000 });
    expect(await clusters.refusedErrorPanel().getAttribute("data-code")).toBe("gpu_runtime_class_missing");
    expect(await clusters.refusedRequestId().textContent()).toMatch(/\S+/);
    expect(await clusters.check("reachable").getAttribute("data-result")).toBe("passed");
    expect(await clusters.check("gpu_runtime_class").getAttribute("data-result")).toBe("failed");
    expect(await clusters.check("gpu_runtime_class").textContent()).toMatch(/RuntimeClass/);
    await shots.take(page, "refused-runtime-class");
    await expectAccessible(page);
  });

  it("a complete cluster is accepted with every check passed and its operator token shown once", async () => {
    const clusters = new ClustersPage(page);
    await clusters.closeRegistration();
    await clusters.register("gpu-ok", "127.0.0.1:9443", await bed.credentialFor("gpu-ok"));
    await clusters.accepted().waitFor({ timeout: 30_000 });
    expect((await clusters.operatorToken().inputValue()).split(".")).toHaveLength(3);
    await clusters.row("gpu-ok").waitFor();
    await shots.take(page, "accepted");
  });

  it("the cluster's page runs the connection test, edits the session domain and guards deregistration", async () => {
    const cluster = await new ClustersPage(page).openCluster("gpu-ok");
    expect(await cluster.testConnection(30_000)).toContain("connected");
    await cluster.setSessionDomain("127.0.0.1:9444");
    await expect.poll(() => cluster.sessionDomain().textContent()).toBe("127.0.0.1:9444");
    expect(await cluster.deregisterButton().isDisabled()).toBe(true);
    await cluster.typeNameToDeregister("gpu-ok");
    expect(await cluster.deregisterButton().isDisabled()).toBe(false);
    await shots.take(page, "cluster-page");
    await expectAccessible(page);
    await page.setViewportSize(PHONE);
    await shots.take(page, "cluster-page-phone");
  });

  it("every administration page passes the accessibility check, with data in it; members are added and removed by email", async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    const org = await bed.t.anOrganization("Acme Research");
    await bed.t.aProject(org.id, "Vision");
    await bed.t.member(bed.user, org.id, null, "member");
    const directory = new DirectoryPages(page);
    for (const [path, ready] of [
      ["/admin/users", directory.usersTable()],
      ["/admin/organizations", directory.organizationsTable()],
      ["/admin/projects", directory.projectsTable()],
      ["/admin/clusters", new ClustersPage(page).table()],
      ["/nope", new Shell(page).notFound()],
    ] as const) {
      await page.goto(path);
      await ready.waitFor();
      if (path === "/admin/organizations") await directory.openMembers("Acme Research");
      await shots.take(page, `page${path.replaceAll("/", "-")}`);
      await expectAccessible(page, path);
    }
    // Members are added by email with a role, and removed, from the organization's panel.
    const newcomer = await bed.t.aUser({ email: "newcomer@example.test" });
    await page.goto("/admin/organizations");
    await directory.openMembers("Acme Research");
    await directory.addMember(newcomer.email, "org_admin");
    await directory.memberRow(/newcomer@example\.test\s+org admin/).waitFor();
    await directory.removeMember(newcomer.email);
    await directory.memberRow(/newcomer@example\.test/).waitFor({ state: "detached" });
    await page.goto("/admin/users");
    await directory.newUser();
    await expectAccessible(page);
    await page.goto("/admin/clusters");
    await new ClustersPage(page).table().waitFor();
  });

  it("deregistration asks for confirmation and then drops the cluster", async () => {
    const cluster = await new ClustersPage(page).openCluster("gpu-ok");
    await cluster.deregister("gpu-ok");
    await page.waitForURL((u) => u.pathname === "/admin/clusters");
    await cluster.shell.emptyState().waitFor();
  });
});
