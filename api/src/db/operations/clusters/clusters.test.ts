import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../db.test-support.ts";
import { sqlState, UNIQUE_VIOLATION } from "../../sqlstate.ts";
import { hasLiveSessions } from "./hasLiveSessions.ts";
import { insertCluster } from "./insertCluster.ts";
import { markClusterDeregistered } from "./updateCluster.ts";

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t?.drop());

let n = 0;
async function aSession(fields: Record<string, unknown>): Promise<void> {
  n += 1;
  await t.db("sessions").insert({
    id: `ses_${n}`,
    cr_name: `ses-${n}`,
    namespace: "org-a",
    owner_id: "usr_1",
    organization_id: "org_a",
    offering: "h100",
    preset: "gpu-small",
    image: "jupyterlab",
    gpu_model: "NVIDIA-H100-80GB-HBM3",
    gpu_count: 1,
    hourly_credit_rate: "1000",
    ...fields,
  });
}

describe("cluster rows", () => {
  it("keep a name unique among registered clusters only", async () => {
    const at = new Date();
    await insertCluster(t.db, {
      id: "clu_n1",
      name: "same",
      session_domain: "a.example",
      registered_by: null,
      registered_at: at,
    });
    const dup = await insertCluster(t.db, {
      id: "clu_n2",
      name: "same",
      session_domain: "a.example",
      registered_by: null,
      registered_at: at,
    }).catch((e: unknown) => e);
    expect(sqlState(dup)).toBe(UNIQUE_VIOLATION);
    await markClusterDeregistered(t.db, "clu_n1", null, at);
    await expect(
      insertCluster(t.db, {
        id: "clu_n3",
        name: "same",
        session_domain: "a.example",
        registered_by: null,
        registered_at: at,
      }),
    ).resolves.toMatchObject({ id: "clu_n3" });
  });
});

describe("the default deregistration guard", () => {
  it("sees sessions placed on or pinned to the cluster until they end", async () => {
    expect(await hasLiveSessions(t.db, "clu_live")).toBe(false);
    await aSession({ cluster_id: "clu_live", phase: "Terminated" });
    await aSession({ cluster_id: "clu_other", phase: "Running" });
    expect(await hasLiveSessions(t.db, "clu_live")).toBe(false);
    await aSession({ cluster_id: "clu_live", phase: "Paused" });
    expect(await hasLiveSessions(t.db, "clu_live")).toBe(true);
    await aSession({ cluster_pin: "clu_pinned", phase: "Queued" });
    expect(await hasLiveSessions(t.db, "clu_pinned")).toBe(true);
  });
});
