// biome-ignore-all lint/suspicious/noExplicitAny: the apiserver's JSON as it comes
// `npm run bed:install` (bed.ts) as a platform team's first install (issue #33, item 1): Berth's pods from
// the bed registry's image on the real node, the API through its Service, an API pod killed while the
// other serves, and a wrong option said in one line naming it. Where canRunRealNode() says yes.
import { execFileSync } from "node:child_process";
import { get as httpsGet } from "node:https";
import { BED_REGISTRY, ENVIRONMENTS, type Environment } from "@berth/cdk8s/environments";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canRunRealNode, leftovers, nodeLayout } from "../testbed/real-node/index.ts";
import { eventually } from "../testbed/waiting.test-support.ts";
import { BED_NODE, type BedInstall, call, checkImages, checkSecrets, InstallError, installOnTheBed } from "./bed.ts";

const can = canRunRealNode();

/** The kubelet's stats summary (its serving certificate is its own, self-signed). */
const kubeletStats = (port: number) =>
  new Promise<any>((resolve, reject) => {
    const req = httpsGet(`https://127.0.0.1:${port}/stats/summary`, { rejectUnauthorized: false }, (res) => {
      let body = "";
      res.on("data", (c) => {
        body += c;
      });
      res.on("end", () =>
        res.statusCode === 200 ? resolve(JSON.parse(body)) : reject(new Error(`${res.statusCode} ${body}`)),
      );
    });
    req.on("error", reject);
  });
const NS = "berth-system";
const bed = ENVIRONMENTS.bed as Environment;

describe.skipIf(!can.ok)(`npm run bed:install${can.ok ? "" : ` (skipped: ${can.reason})`}`, () => {
  let install: BedInstall;
  const lines: string[] = [];
  const pods = async (app: string) =>
    (
      await install.kube.json<any>(
        "GET",
        `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent(`app.kubernetes.io/name=${app}`)}`,
      )
    ).items as any[];
  const ready = (p: any) => p.status.conditions?.some((c: any) => c.type === "Ready" && c.status === "True");

  beforeAll(async () => {
    install = await installOnTheBed({ log: (l) => lines.push(l) });
  }, 1_500_000);

  afterAll(async () => {
    await install?.stop();
    if (install) {
      expect(leftovers(nodeLayout(BED_NODE))).toEqual({ processes: [], mounts: [], links: [], cgroups: [] });
      expect(execFileSync("iptables-save", { encoding: "utf8" })).not.toMatch(/KUBE-/);
    }
  }, 300_000);

  it("runs the API (2), worker (2, one leader), operator, gateway, Postgres and metrics as Ready pods pulled from the bed's registry", async () => {
    const want = {
      "berth-api": 2,
      "berth-worker": 2,
      "berth-operator": 1,
      "berth-gateway": 1,
      "berth-postgres": 1,
      "berth-metrics": 1,
    };
    for (const [app, n] of Object.entries(want)) {
      // A Deployment's pod of the revision before registration may still be on its way out.
      const ps = (await pods(app)).filter(ready);
      expect(ps, app).toHaveLength(n);
      for (const p of ps) {
        expect(p.spec.nodeName).toBe(BED_NODE);
        const s = p.status.containerStatuses[0];
        expect(s.image.startsWith(`${BED_REGISTRY}/`), s.image).toBe(true);
        // Pulled by the kubelet: the runtime names the registry's digest.
        expect(s.imageID).toMatch(new RegExp(`^${BED_REGISTRY.replace(/\./g, "\\.")}/.+@sha256:[0-9a-f]{64}$`));
      }
    }
    const lease = await install.kube.json<any>(
      "GET",
      `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/berth-worker`,
    );
    expect((await pods("berth-worker")).map((p) => p.metadata.name)).toContain(lease.spec.holderIdentity);
  });

  it("answers through the API's Service, as the installed cluster's own administrator", async () => {
    const me = await call(install.apiUrl, install.admin.token, "GET", "/api/v1/auth/me");
    expect(me.status, JSON.stringify(me.body)).toBe(200);
    expect(me.body.email).toBe(install.admin.email);
    // The console, served by the API from the image's console/dist.
    const page = await fetch(install.consoleUrl, { headers: { accept: "text/html" } });
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<html/i);
    const clusters = await call(install.apiUrl, install.admin.token, "GET", "/api/v1/clusters");
    expect(clusters.body.data.map((c: any) => c.id)).toContain(install.clusterId);
  });

  it("keeps answering when an API pod is killed, and the Deployment replaces it", async () => {
    const before = (await pods("berth-api")).map((p) => p.metadata.name as string);
    const [victim, survivor] = before;
    await install.kube.json("DELETE", `/api/v1/namespaces/${NS}/pods/${victim}?gracePeriodSeconds=0`);
    // Once the Service's endpoints have dropped the victim, every answer is the survivor's.
    await eventually(
      async () => {
        const slices = await install.kube.json<any>(
          "GET",
          `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices?labelSelector=kubernetes.io/service-name=berth-api`,
        );
        const names = slices.items.flatMap((s: any) => (s.endpoints ?? []).map((e: any) => e.targetRef?.name));
        return names.includes(victim) ? undefined : true;
      },
      { what: "the victim out of the Service's endpoints", timeoutMs: 60_000 },
    );
    for (let i = 0; i < 5; i++) {
      const me = await call(install.apiUrl, install.admin.token, "GET", "/api/v1/auth/me");
      expect(me.status).toBe(200);
    }
    const after = await eventually(
      async () => {
        const ps = await pods("berth-api");
        return ps.filter(ready).length === 2 && !ps.some((p) => p.metadata.name === victim) ? ps : undefined;
      },
      { what: "a replacement API pod Ready", timeoutMs: 300_000, intervalMs: 1000 },
    );
    expect(after.map((p) => p.metadata.name)).toContain(survivor);
  });

  it("says a wrong option in one line naming it: an image the node cannot pull, a database Secret that does not exist", async () => {
    const badImage: Environment = {
      ...bed,
      controlPlane: { ...bed.controlPlane, image: { image: `${BED_REGISTRY}/berth:not-pushed` } },
    };
    const e1 = await checkImages(badImage).catch((e) => e);
    expect(e1).toBeInstanceOf(InstallError);
    expect(e1.option).toBe("controlPlane.image.image");
    expect(e1.message.split("\n")).toHaveLength(1);
    expect(e1.message).toContain("berth:not-pushed");

    const missingSecret: Environment = {
      ...bed,
      controlPlane: { ...bed.controlPlane, database: { external: { secretName: "berth-database" } } },
    };
    const e2 = await checkSecrets(missingSecret, install.kube).catch((e) => e);
    expect(e2).toBeInstanceOf(InstallError);
    expect(e2.option).toBe("controlPlane.database.external.secretName");
    expect(e2.message.split("\n")).toHaveLength(1);
    expect(e2.message).toContain("berth-system/berth-database does not exist");

    // The committed environment passes both.
    await checkImages(bed);
    await checkSecrets(bed, install.kube);
  });

  it("records its figures", async () => {
    // From the kubelet itself (anonymous on loopback): the apiserver's node proxy refuses a loopback address.
    const summary = await kubeletStats(install.node.kubeletPort);
    const mem = summary.pods
      .filter((p: any) => p.podRef.namespace === NS)
      .map((p: any) => `${p.podRef.name} ${((p.memory?.rssBytes ?? 0) / 2 ** 20).toFixed(0)} MiB rss`);
    const events = await install.kube.json<any>("GET", `/api/v1/namespaces/${NS}/events`);
    const pulls = events.items
      .filter((e: any) => e.reason === "Pulled" && /Successfully pulled/.test(e.message))
      .map((e: any) => `${e.involvedObject.name}: ${e.message}`);
    console.log(
      [
        `install: ${Object.entries(install.timings)
          .map(([k, v]) => `${k} ${v.toFixed(1)} s`)
          .join("; ")}`,
        ...pulls,
        ...mem,
      ].join("\n"),
    );
    expect(mem.length).toBeGreaterThan(0);
  });
});
