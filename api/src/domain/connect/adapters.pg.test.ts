// The real ports over the sessions and clusters tables: who sees, who may connect, where the pod is.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../db/db.test-support.ts";
import { testDeps } from "../../http/http.test-support.ts";
import { dbClusters, sessionsForConnect } from "./adapters.ts";
import { aPrincipal } from "./connect.test-support.ts";

let tdb: TestDatabase;
const alice = aPrincipal("usr_alice", { memberships: [{ organizationId: "org_1", role: "member" }] });

const row = (id: string, over: Record<string, unknown> = {}) => ({
  id,
  cr_name: id.replace("_", "-"),
  namespace: "org-1",
  owner_id: "usr_alice",
  organization_id: "org_1",
  offering: "h100",
  preset: "small",
  image: "lab",
  gpu_model: "H100",
  gpu_count: 1,
  hourly_credit_rate: "100",
  cluster_id: "clu_a",
  phase: "Running",
  ...over,
});

beforeAll(async () => {
  tdb = await createTestDatabase();
  await tdb
    .db("users")
    .insert(
      ["usr_alice", "usr_root", "usr_gone"].map((id) => ({ id, email: `${id}@example.test`, password_hash: "x" })),
    );
  await tdb.db("organizations").insert({ id: "org_1", name: "One", slug: "one" });
  await tdb.db("memberships").insert({ user_id: "usr_alice", organization_id: "org_1", role: "member" });
  await tdb.db("sessions").insert([row("ses_running"), row("ses_queued", { cluster_id: null, phase: "Queued" })]);
  await tdb.db("clusters").insert([
    { id: "clu_a", name: "a", session_domain: "a.test:9443" },
    { id: "clu_gone", name: "gone", session_domain: "gone.test", deregistered_at: new Date() },
  ]);
});
afterAll(async () => {
  await tdb?.drop();
});

describe("sessions for connecting", () => {
  it("finds the pod on the GPU cluster by the session's resource name, in the sessions namespace", async () => {
    const s = await sessionsForConnect(testDeps({ db: tdb.db })).forUser(alice, "ses_running");
    expect(s).toEqual({
      id: "ses_running",
      crName: "ses-running",
      phase: "Running",
      ownerId: "usr_alice",
      organizationId: "org_1",
      clusterId: "clu_a",
      podName: "ses-running",
      namespace: "berth-sessions",
    });
  });

  it("has no pod for a session that was never placed", async () => {
    const s = await sessionsForConnect(testDeps({ db: tdb.db })).byId("ses_queued");
    expect(s?.clusterId).toBeUndefined();
    expect(s?.podName).toBeUndefined();
  });

  it("hides a session from another member (404), shows it to a super admin, and lets only the owner connect", async () => {
    const port = sessionsForConnect(testDeps({ db: tdb.db }));
    await expect(port.forUser(aPrincipal("usr_bob"), "ses_running")).rejects.toMatchObject({ code: "not_found" });
    const seen = await port.forUser(aPrincipal("usr_root", { isSuperAdmin: true }), "ses_running");
    expect(await port.mayUse("usr_root", seen)).toBe(false);
    expect(await port.mayUse("usr_alice", seen)).toBe(true);
  });

  it("no longer lets an owner removed from the organization see or connect to their session", async () => {
    await tdb.db("sessions").insert(row("ses_left", { owner_id: "usr_gone" }));
    const port = sessionsForConnect(testDeps({ db: tdb.db }));
    // No membership left in org_1: as if the session were another member's.
    await expect(port.forUser(aPrincipal("usr_gone"), "ses_left")).rejects.toMatchObject({ code: "not_found" });
    expect(await port.mayUse("usr_gone", (await port.byId("ses_left")) as never)).toBe(false);
  });

  it("lets a super_admin connect to their own session in an organization they are not a member of", async () => {
    await tdb.db("users").where({ id: "usr_root" }).update({ is_super_admin: true });
    await tdb.db("sessions").insert(row("ses_roots", { owner_id: "usr_root" }));
    const port = sessionsForConnect(testDeps({ db: tdb.db }));
    expect(await port.mayUse("usr_root", (await port.byId("ses_roots")) as never)).toBe(true);
  });
});

describe("clusters for connecting", () => {
  it("answers a registered cluster's session domain and nothing for a deregistered one", async () => {
    const c = dbClusters({ db: tdb.db });
    expect(await c.byId("clu_a")).toEqual({ id: "clu_a", sessionDomain: "a.test:9443" });
    expect(await c.byId("clu_gone")).toBeUndefined();
    expect(await c.byId("clu_none")).toBeUndefined();
  });
});
