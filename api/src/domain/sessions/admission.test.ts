// Creates that reach an organization's door together are decided in batches (admission.ts): over HTTP
// with the real API and Postgres, concurrent creates by several people must get exactly the answers
// they would get one after the other — no limit passed by one, no credits promised twice — and a batch
// must really hold several. The management cluster is a stand-in (catalog + Session writes).
import { ResourcePolicyKind } from "@berth/crds";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type IdentityTestApi, startIdentityTestApi, type TestUser } from "../../auth/testing.ts";
import { FakeManagementCluster } from "../../billing/fakes.ts";
import { expectLedgerInvariants, grant } from "../../billing/testing.ts";
import { ensureWallet } from "../../billing/wallets.ts";
import { aGpuCluster } from "../../db/operations/sessions/testing.ts";
import { MAX_BATCH } from "./admission.ts";
import { makeSessionsRuntime, setSessionsRuntime } from "./runtime.ts";

// Ten minutes of h100 (4 credits/h), rounded up: the door's minimum run.
const TEN_MINUTES = 666_667n;

describe("creates decided together at an organization's door", () => {
  let t: IdentityTestApi;
  let kube: FakeManagementCluster;
  const orgs: Record<"credits" | "gpus" | "own" | "many", { id: string; people: TestUser[] }> = {} as never;

  /** An organization with `people` members and its wallet holding `credits` units. */
  async function anOrganization(name: string, people: number, credits: bigint) {
    const id = (await t.anOrganization(name)).id;
    const members: TestUser[] = [];
    for (let i = 0; i < people; i++) {
      const u = await t.aUser();
      await t.member(u, id, null, "member");
      members.push(u);
    }
    const { wallet } = await ensureWallet(t.database.db, { organizationId: id, kind: "organization", id }, new Date());
    await grant(t.database.db, wallet.id, credits, new Date());
    return { id, people: members };
  }

  beforeAll(async () => {
    t = await startIdentityTestApi();
    kube = new FakeManagementCluster();
    setSessionsRuntime(t.deps, makeSessionsRuntime(kube));
    orgs.credits = await anOrganization("Thin wallet", 8, 3n * TEN_MINUTES);
    orgs.gpus = await anOrganization("Five GPUs", 4, 1000n * TEN_MINUTES);
    orgs.own = await anOrganization("One eager person", 1, 1000n * TEN_MINUTES);
    orgs.many = await anOrganization("A class at nine", 10, 1000n * TEN_MINUTES);
    // Set before the first read: the catalog caches policies for a few seconds.
    kube.policies.push(
      ResourcePolicyKind.build(
        { name: "global" },
        { scope: { kind: "global" }, limits: { maxConcurrentSessionsPerUser: 3, maxGpusPerUser: 100 } },
      ),
      ResourcePolicyKind.build(
        { name: "five-gpus" },
        { scope: { kind: "organization", id: orgs.gpus.id }, limits: { maxGpusPerOrganization: 5 } },
      ),
      ResourcePolicyKind.build(
        { name: "a-class" },
        { scope: { kind: "organization", id: orgs.many.id }, limits: { maxConcurrentSessionsPerUser: 100 } },
      ),
    );
    await aGpuCluster(t.database.db, "clu_admission", 8);
  });
  afterAll(async () => {
    await expectLedgerInvariants(t.database.db);
    await t?.stop();
  });

  /** `n` creates sent at once, by the organization's people in turn. */
  async function together(org: { id: string; people: TestUser[] }, n: number) {
    const answers = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        t.request("POST", "/api/v1/sessions", {
          token: (org.people[i % org.people.length] as TestUser).token,
          json: { offering: "h100", preset: "gpu-small", image: "jupyterlab", organization_id: org.id },
        }),
      ),
    );
    const rows = await t.database.db("sessions").where({ organization_id: org.id });
    return { answers, rows, statuses: answers.map((a) => a.status) };
  }

  const batchSizes = async () => {
    const m = await t.deps.metrics.sessionAdmissionBatch.get();
    const count = m.values.find((v) => v.metricName?.endsWith("_count"))?.value ?? 0;
    const sum = m.values.find((v) => v.metricName?.endsWith("_sum"))?.value ?? 0;
    return { count, sum };
  };

  it("lets exactly as many in as the wallet holds minimum runs, and tells the others what is owed", async () => {
    const { answers, rows, statuses } = await together(orgs.credits, 8);
    expect(statuses.filter((s) => s === 201)).toHaveLength(3);
    expect(statuses.filter((s) => s === 403)).toHaveLength(5);
    expect(rows).toHaveLength(3);
    for (const refused of answers.filter((a) => a.status === 403)) {
      expect(refused.body.error).toMatchObject({
        code: "quota_exceeded",
        details: {
          limit: "credits",
          value: (3n * TEN_MINUTES).toString(),
          reserved: (3n * TEN_MINUTES).toString(),
          sessions_let_in: 3,
        },
      });
    }
  });

  it("holds an organization's GPU limit across people, saying what is in use", async () => {
    const { answers, rows, statuses } = await together(orgs.gpus, 12);
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(rows).toHaveLength(5);
    for (const refused of answers.filter((a) => a.status === 403)) {
      expect(refused.body.error).toMatchObject({
        code: "quota_exceeded",
        details: { limit: "maxGpusPerOrganization", value: 5, current: 5, requested: 1 },
      });
    }
  });

  it("holds one person's own limit when they send several at once", async () => {
    const { answers, rows, statuses } = await together(orgs.own, 7);
    expect(statuses.filter((s) => s === 201)).toHaveLength(3);
    expect(rows).toHaveLength(3);
    for (const refused of answers.filter((a) => a.status === 403)) {
      expect(refused.body.error.details).toMatchObject({ limit: "maxConcurrentSessionsPerUser", value: 3, current: 3 });
    }
  });

  it("decides many creates per hold of the door, every one answered and written once", async () => {
    const before = await batchSizes();
    const n = MAX_BATCH + 40;
    const { answers, rows, statuses } = await together(orgs.many, n);
    expect(statuses.every((s) => s === 201)).toBe(true);
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(n);
    expect(rows.map((r) => r.id).sort()).toEqual(answers.map((a) => a.body.id).sort());
    const after = await batchSizes();
    expect(after.sum - before.sum).toBe(n);
    // The requests arrive while the first batch holds the door: far fewer batches than requests.
    expect(after.count - before.count).toBeLessThan(n / 4);
    expect(after.count - before.count).toBeGreaterThanOrEqual(2); // MAX_BATCH caps a batch
  });
});
