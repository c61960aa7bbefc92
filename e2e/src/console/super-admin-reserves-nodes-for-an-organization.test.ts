// Journey: a super_admin reserves a GPU cluster's labelled nodes for one organization from the cluster's
// page. The pool shows the nodes it holds; a selector that overlaps is refused with why; granting shows
// the organization; removing the grant says how many running sessions were warned. Then the same pool goes
// to one of the organization's projects (picked organization first; one with no projects says so, a project
// deleted meanwhile is refused with the API's message) and to one researcher, picked by the email of her
// account (an unknown email is refused with why).

import { applyInventory } from "@berth/api/testing";
import { ensureConsoleBuilt } from "@berth/console";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { bedApi } from "../api-client.ts";
import { type ClustersBed, startClustersBed } from "../clusters/harness.ts";
import { closeBrowser, expectAccessible, launchBrowser, newContext, Screenshots } from "./browser.ts";
import { ClustersPage } from "./pages/clusters-page.ts";
import { LoginPage } from "./pages/login-page.ts";
import { NodePoolsSection } from "./pages/node-pools-section.ts";
import { Shell } from "./pages/shell.ts";

const H100 = "NVIDIA-H100-80GB-HBM3";
const PI = "pi.lee@vision-lab.test";

describe("a super_admin reserves nodes for an organization", () => {
  let bed: ClustersBed;
  let browser: Browser;
  let page: Page;
  let clusterId = "";
  let oldCohort = "";
  const shots = new Screenshots("super-admin-reserves-nodes");

  beforeAll(async () => {
    ensureConsoleBuilt();
    bed = await startClustersBed({
      clusters: [
        { name: "mgmt", kind: "management" },
        {
          name: "gpu-a",
          kind: "gpu",
          nodes: [{ name: "gpu-a-1", gpuModel: H100, gpuCount: 8 }],
          gpuRuntimeClass: true,
          gpuDevicePlugin: true,
        },
      ],
    });
    const res = await bedApi(bed, bed.superAdmin).call("registerCluster", {
      body: { name: "gpu-a", session_domain: "gpu-a.sessions.localhost", credential: await bed.credentialFor("gpu-a") },
    });
    clusterId = res.cluster.id;
    const node = (name: string, labels: Record<string, string>) => ({
      name,
      gpu_model: H100,
      gpu_count: 8,
      gpu_allocatable: 8,
      gpu_in_use: 0,
      labels: { "nvidia.com/gpu.product": H100, ...labels },
      schedulable: true,
      ready: true,
      devices: Array.from({ length: 8 }, (_, index) => ({ index })),
    });
    await applyInventory(bed.t.deps, clusterId, new Date(), [
      node("gpu-a-1", {}),
      node("gpu-a-lab-1", { "berth.dev/pool": "lab" }),
      node("gpu-a-lab-2", { "berth.dev/pool": "lab", rack: "r7" }),
    ]);
    const lab = await bed.t.anOrganization("Vision Lab");
    await bed.t.member(await bed.t.aUser({ email: PI }), lab.id, null, "member");
    await bed.t.aProject(lab.id, "Retina");
    oldCohort = (await bed.t.aProject(lab.id, "Old cohort")).id;
    await bed.t.anOrganization("Teaching Lab");
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

  it("makes a pool of the labelled nodes, closed until granted", async () => {
    const pools = new NodePoolsSection(page);
    const clusters = new ClustersPage(page);
    await clusters.open();
    await clusters.openCluster("gpu-a");
    await pools.ready();
    await pools.make("lab", "berth.dev/pool=lab");
    await pools.notice().waitFor();
    expect(await pools.nodesOf("lab")).toBe("gpu-a-lab-1 gpu-a-lab-2");
    await expect(pools.row("lab").innerText()).resolves.toContain("Closed: granted to nobody");
    await shots.take(page, "pool-made");
    await expectAccessible(page);
  });

  it("refuses an overlapping pool and says which nodes it would share", async () => {
    const pools = new NodePoolsSection(page);
    await pools.make("rack7", "rack=r7");
    await pools.error(/would share nodes with pool lab/).waitFor();
    await shots.take(page, "overlap-refused");
  });

  it("grants the pool to an organization and removes the grant", async () => {
    const pools = new NodePoolsSection(page);
    await pools.grant("lab", "Vision Lab");
    await pools.grants("lab").first().waitFor();
    expect(await pools.grants("lab").first().innerText()).toContain("Organization Vision Lab");
    await shots.take(page, "pool-granted");
    await pools.removeGrant("lab", "Vision Lab");
    await expect.poll(() => pools.notice().innerText()).toContain("0 running session(s) warned");
    await shots.take(page, "grant-removed");
  });

  it("grants the pool to a project of an organization, listed with its organization, and removes the grant", async () => {
    const pools = new NodePoolsSection(page);
    await pools.pickProjectOrganization("lab", "Teaching Lab");
    await expect.poll(() => pools.noProjects("lab").innerText()).toContain("Teaching Lab has no projects");
    await shots.take(page, "organization-without-projects");
    await pools.pickProjectOrganization("lab", "Vision Lab");
    await pools.noProjects("lab").waitFor({ state: "detached" });
    await shots.take(page, "project-form");
    // The form offered it before it went: the API's 422 reaches the page with its message.
    await bedApi(bed, bed.superAdmin).call("deleteProject", { params: { projectId: oldCohort } });
    await pools.grantToProject("lab", "Vision Lab", "Old cohort");
    await pools.error(new RegExp(`no project ${oldCohort}`)).waitFor();
    await shots.take(page, "deleted-project-refused");
    await expect.poll(() => pools.projectsOffered("lab")).toEqual(["Retina"]);
    await pools.grantToProject("lab", "Vision Lab", "Retina");
    await expect.poll(() => pools.notice().innerText()).toContain("granted to project Retina");
    await pools.grants("lab").first().waitFor();
    expect(await pools.grants("lab").first().innerText()).toContain("Project Retina (Vision Lab)");
    await shots.take(page, "pool-granted-to-a-project");
    await expectAccessible(page);
    await pools.removeGrant("lab", "Retina (Vision Lab)");
    await expect.poll(() => pools.notice().innerText()).toContain("0 running session(s) warned");
    await expect.poll(() => pools.grants("lab").count()).toBe(0);
  });

  it("grants the pool to one researcher by email, and refuses an email no account has", async () => {
    const pools = new NodePoolsSection(page);
    await pools.grantToPerson("lab", "nobody@vision-lab.test");
    await pools.error(/No account has the email nobody@vision-lab.test/).waitFor();
    await pools.grantToPerson("lab", PI);
    await expect.poll(() => pools.notice().innerText()).toContain(`granted to ${PI}`);
    await pools.grants("lab").first().waitFor();
    expect(await pools.grants("lab").first().innerText()).toContain(`Person ${PI}`);
    await shots.take(page, "pool-granted-to-a-person");
    await expectAccessible(page);
    await pools.removeGrant("lab", PI);
    await expect.poll(() => pools.notice().innerText()).toContain("0 running session(s) warned");
  });
});
