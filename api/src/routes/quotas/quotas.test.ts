// Quota-increase requests and effective limits against real Postgres and a real kube-apiserver (the test
// bed's management cluster) holding the generated CRDs and the default catalog: a member asks, an
// administrator approves part, the override policy changes only what was granted, and the member's
// effective limits and the quota gate's own lookup (effectiveLimit) see it.
import { HttpKube } from "@berth/controllers/kube";
import { loadCrds } from "@berth/crds/manifests";
import { type Fleet, kubeConfigFrom, startFleet } from "@berth/e2e";
import { ApiextensionsV1Api, CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installDefaultCatalog } from "../../bootstrap/catalog.ts";
import {
  anIdentityWorld,
  type IdentityTestApi,
  type IdentityWorld,
  itBehavesPerRole,
  type RouteCase,
  startIdentityTestApi,
  type TestUser,
} from "../../domain/identity/identity.test-support.ts";
import { readPolicies } from "../../domain/quotas/effective.ts";
import { effectiveLimit } from "../../domain/sessions/checkQuota.ts";

let fleet: Fleet;
let kc: KubeConfig;
let kube: HttpKube;
let t: IdentityTestApi;
let w: IdentityWorld;

beforeAll(async () => {
  fleet = await startFleet({ clusters: [{ name: "mgmt", kind: "management" }] });
  kc = kubeConfigFrom(fleet.cluster("mgmt").kubeconfig);
  const ext = kc.makeApiClient(ApiextensionsV1Api);
  for (const crd of loadCrds()) await ext.createCustomResourceDefinition({ body: crd as never });
  kube = new HttpKube(kc);
  await installDefaultCatalog(kube);
  t = await startIdentityTestApi({ kubeConfig: kc });
  w = await anIdentityWorld(t);
});

afterAll(async () => {
  await t?.stop();
  kube?.close();
  await fleet?.stop();
});

const POLICIES = { group: "berth.dev", version: "v1alpha1", plural: "resourcepolicies" };
const custom = () => kc.makeApiClient(CustomObjectsApi);
const policy = async (name: string) =>
  (await custom().getClusterCustomObject({ ...POLICIES, name })) as {
    spec: { scope: Record<string, string>; limits: Record<string, number> };
  };

async function ask(who: TestUser, body: Record<string, unknown>) {
  return t.request("POST", "/api/v1/resource-policies/requests", { token: who.token, json: body });
}

async function effective(who: TestUser, query = "") {
  const r = await t.request("GET", `/api/v1/resource-policies/effective${query}`, { token: who.token });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return Object.fromEntries(
    (
      r.body.limits as {
        name: string;
        value: number | null;
        used: number | null;
        headroom: number | null;
        policy: string | null;
      }[]
    ).map((l) => [l.name, l]),
  );
}

/** A fresh member of organization A (project A), with no request of theirs yet. */
async function aMemberOfA(): Promise<TestUser> {
  const u = await t.aUser();
  await t.member(u, w.orgA.id, w.projectA.id, "member");
  return u;
}

describe("effective limits", () => {
  it("tell a member their limits, what they use, the headroom and the policy each comes from", async () => {
    const l = await effective(w.memberA, `?organization_id=${w.orgA.id}&project_id=${w.projectA.id}`);
    expect(l.max_gpus_per_user).toMatchObject({ value: 4, used: 0, headroom: 4, policy: "global" });
    expect(l.max_concurrent_sessions_per_user).toMatchObject({ value: 4, used: 0, policy: "global" });
    expect(l.max_volume_gb_per_user).toMatchObject({ value: 500, used: 0, policy: "global" });
    // Nothing sets the project's GPUs by default: no limit, no headroom to speak of.
    expect(l.max_gpus_per_project).toMatchObject({ value: null, headroom: null, policy: null });
  });

  it("default to the one organization of a member, and answer 404 for another's organization or project", async () => {
    expect((await effective(w.memberB)).max_gpus_per_user?.value).toBe(4);
    const other = await t.request("GET", `/api/v1/resource-policies/effective?organization_id=${w.orgB.id}`, {
      token: w.memberA.token,
    });
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe("not_found");
    const project = await t.request(
      "GET",
      `/api/v1/resource-policies/effective?organization_id=${w.orgA.id}&project_id=${w.projectB.id}`,
      { token: w.memberA.token },
    );
    expect(project.status).toBe(404);
  });

  it("asks someone in several organizations, or in none, to name one", async () => {
    const both = await t.aUser();
    await t.member(both, w.orgA.id, null, "member");
    await t.member(both, w.orgB.id, null, "member");
    for (const who of [both, w.outsider]) {
      const r = await t.request("GET", "/api/v1/resource-policies/effective", { token: who.token });
      expect(r.status).toBe(400);
      expect(r.body.error.details.issues[0].path).toEqual(["query", "organization_id"]);
    }
  });

  it("tell the idle and running-time rules a session created there runs under, the narrowest scope's first", async () => {
    const at = `?organization_id=${w.orgB.id}&project_id=${w.projectB.id}`;
    const before = await t.request("GET", `/api/v1/resource-policies/effective${at}`, { token: w.memberB.token });
    expect(before.body.idle).toEqual({
      timeout_minutes: 60,
      min_timeout_minutes: 20,
      max_timeout_minutes: 480,
      gpu_utilization_percent: 5,
      keep_running_max: 3,
      max_runtime_minutes: 24 * 60,
    });
    await custom().createClusterCustomObject({
      ...POLICIES,
      body: {
        apiVersion: "berth.dev/v1alpha1",
        kind: "ResourcePolicy",
        metadata: { name: "idle-bounds-b" },
        spec: {
          scope: { kind: "project", id: w.projectB.id },
          limits: { maxSessionHours: 8 },
          idle: { minTimeoutMinutes: 30, maxTimeoutMinutes: 120 },
        },
      },
    });
    try {
      const r = await t.request("GET", `/api/v1/resource-policies/effective${at}`, { token: w.memberB.token });
      expect(r.body.idle).toMatchObject({ timeout_minutes: 60, min_timeout_minutes: 30, max_timeout_minutes: 120 });
      expect(r.body.idle.max_runtime_minutes).toBe(8 * 60);
      // The organization alone keeps the defaults.
      const org = await t.request("GET", `/api/v1/resource-policies/effective?organization_id=${w.orgB.id}`, {
        token: w.memberB.token,
      });
      expect(org.body.idle.min_timeout_minutes).toBe(20);
    } finally {
      await custom().deleteClusterCustomObject({ ...POLICIES, name: "idle-bounds-b" });
    }
  });

  it("refuses an unknown query parameter with the envelope", async () => {
    const r = await t.request("GET", "/api/v1/resource-policies/effective?user_id=someone", { token: w.memberA.token });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("validation_failed");
  });
});

describe("idle limits are requested like the others and written into the policy's idle settings", () => {
  it("a member asks for a longer idle timeout and more keep-runnings; the grant lands in spec.idle, not spec.limits", async () => {
    const erin = await aMemberOfA();
    const at = `?organization_id=${w.orgA.id}&project_id=${w.projectA.id}`;
    const before = await effective(erin, at);
    // No policy sets them: the built-in defaults are the limits, and requestable.
    expect(before.max_idle_timeout_minutes).toMatchObject({ value: 480, policy: null, requestable: "user" });
    expect(before.keep_running_max).toMatchObject({ value: 3, policy: null, requestable: "user" });
    const tooBig = await ask(erin, {
      organization_id: w.orgA.id,
      scope: "user",
      limits: { max_idle_timeout_minutes: 20_000 },
      reason: "a long weekend",
    });
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.error.details.issues[0]).toMatchObject({
      path: ["body", "limits", "max_idle_timeout_minutes"],
      message: "at most 10080",
    });
    const notMore = await ask(erin, {
      organization_id: w.orgA.id,
      scope: "user",
      limits: { keep_running_max: 3 },
      reason: "same",
    });
    expect(notMore.status).toBe(400);
    const r = await ask(erin, {
      organization_id: w.orgA.id,
      scope: "user",
      limits: { max_idle_timeout_minutes: 720, keep_running_max: 6 },
      reason: "overnight notebooks that wait on a shared dataset",
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.current).toEqual({ max_idle_timeout_minutes: 480, keep_running_max: 3 });
    const ok = await t.request("POST", `/api/v1/resource-policies/requests/${r.body.id}/approve`, {
      token: w.adminA.token,
      json: { limits: { max_idle_timeout_minutes: 600, keep_running_max: 6 } },
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const written = (await policy(ok.body.policy)) as unknown as { spec: Record<string, unknown> };
    expect(written.spec).toEqual({
      scope: { kind: "user", id: erin.id, organization: w.orgA.id },
      limits: {},
      idle: { maxTimeoutMinutes: 600, keepRunningMax: 6 },
    });
    const after = await effective(erin, at);
    expect(after.max_idle_timeout_minutes).toMatchObject({ value: 600, policy: ok.body.policy });
    expect(after.keep_running_max).toMatchObject({ value: 6, policy: ok.body.policy });
    // The rules her sessions run under (what the wizard offers and creation checks) follow.
    const rules = await t.request("GET", `/api/v1/resource-policies/effective${at}`, { token: erin.token });
    expect(rules.body.idle).toMatchObject({ max_timeout_minutes: 600, keep_running_max: 6, min_timeout_minutes: 20 });
    // A colleague in the same project keeps the defaults.
    expect((await effective(w.memberA, at)).max_idle_timeout_minutes?.value).toBe(480);
  });
});

describe("a member asks for more GPUs and an administrator grants part of it", () => {
  let alice: TestUser;
  let id: string;

  it("the member asks with a reason; the organization's admin hears of it and sees it incoming", async () => {
    alice = await aMemberOfA();
    const r = await ask(alice, {
      organization_id: w.orgA.id,
      project_id: w.projectA.id,
      limits: { max_gpus_per_user: 8, max_concurrent_sessions_per_user: 6 },
      reason: "a sweep over eight seeds",
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({
      scope: "user",
      status: "pending",
      asked: { max_gpus_per_user: 8, max_concurrent_sessions_per_user: 6 },
      current: { max_gpus_per_user: 4, max_concurrent_sessions_per_user: 4 },
      can_decide: false,
    });
    id = r.body.id;
    const inbox = await t.request("GET", "/api/v1/resource-policies/requests?box=incoming&status=pending", {
      token: w.adminA.token,
    });
    const row = inbox.body.data.find((x: { id: string }) => x.id === id);
    expect(row).toMatchObject({ can_decide: true, requester_id: alice.id });
    const bell = await t.request("GET", "/api/v1/notifications?kind=quota.request_received", { token: w.adminA.token });
    expect(bell.body.data.some((n: { data: { request_id: string } }) => n.data.request_id === id)).toBe(true);
    // Another organization's admin neither sees nor hears of it.
    const b = await t.request("GET", "/api/v1/resource-policies/requests", { token: w.adminB.token });
    expect(b.body.data.some((x: { id: string }) => x.id === id)).toBe(false);
    // The member's own list has it; a second pending request for herself is refused.
    const mine = await t.request("GET", "/api/v1/resource-policies/requests?box=mine", { token: alice.token });
    expect(mine.body.data.map((x: { id: string }) => x.id)).toEqual([id]);
    const again = await ask(alice, { organization_id: w.orgA.id, limits: { max_gpus_per_user: 5 }, reason: "again" });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("conflict");
  });

  it("a project admin may not decide a person's own limits", async () => {
    const r = await t.request("POST", `/api/v1/resource-policies/requests/${id}/approve`, {
      token: w.projectAdminA.token,
      json: {},
    });
    expect(r.status).toBe(404);
  });

  it("granting more than asked, or a limit not asked for, is refused with the fields named", async () => {
    const r = await t.request("POST", `/api/v1/resource-policies/requests/${id}/approve`, {
      token: w.adminA.token,
      json: { limits: { max_gpus_per_user: 9, max_volume_gb_per_user: 900 } },
    });
    expect(r.status).toBe(400);
    const paths = r.body.error.details.issues.map((i: { path: string[] }) => i.path.join("."));
    expect(paths).toEqual(["body.limits.max_gpus_per_user", "body.limits.max_volume_gb_per_user"]);
  });

  it("the admin grants 6 of the 8 GPUs: an override for her in organization A with only that limit", async () => {
    const r = await t.request("POST", `/api/v1/resource-policies/requests/${id}/approve`, {
      token: w.adminA.token,
      json: { limits: { max_gpus_per_user: 6 }, note: "six for now" },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({
      status: "partially_approved",
      granted: { max_gpus_per_user: 6 },
      decided_by: w.adminA.id,
      decision_note: "six for now",
      can_decide: false,
    });
    const written = await policy(r.body.policy);
    expect(written.spec).toEqual({
      scope: { kind: "user", id: alice.id, organization: w.orgA.id },
      limits: { maxGpusPerUser: 6 },
      idle: {}, // the resource's schema defaults it: no idle setting of hers
    });
    // She and her organization's admins see the policy in the catalog; a colleague does not.
    for (const [who, status] of [
      [alice, 200],
      [w.adminA, 200],
      [w.memberA, 404],
      [w.adminB, 404],
    ] as const) {
      const seen = await t.request("GET", `/api/v1/resource-policies/${r.body.policy}`, { token: who.token });
      expect(seen.status).toBe(status);
    }
    // Her GPUs come from the override, everything else still from the global policy.
    const l = await effective(alice, `?organization_id=${w.orgA.id}&project_id=${w.projectA.id}`);
    expect(l.max_gpus_per_user).toMatchObject({ value: 6, policy: r.body.policy });
    expect(l.max_concurrent_sessions_per_user).toMatchObject({ value: 4, policy: "global" });
    // The quota gate's lookup sees the same; another person, or she in another organization, does not.
    const all = await readPolicies(t.deps);
    const at = { organizationId: w.orgA.id, projectId: w.projectA.id };
    expect(effectiveLimit(all, "maxGpusPerUser", { ...at, userId: alice.id })?.value).toBe(6);
    expect(effectiveLimit(all, "maxGpusPerUser", { ...at, userId: w.memberA.id })?.value).toBe(4);
    expect(
      effectiveLimit(all, "maxGpusPerUser", { organizationId: w.orgB.id, projectId: null, userId: alice.id })?.value,
    ).toBe(4);
  });

  it("she is notified; the decision and the policy written are audited; a second decision is 409", async () => {
    const bell = await t.request("GET", "/api/v1/notifications?kind=quota.request_decided", { token: alice.token });
    expect(bell.body.data[0]).toMatchObject({ title: "Quota request partly approved" });
    const audit = await t.request(
      "GET",
      `/api/v1/audit-logs?resource_type=quota_request&resource_id=${id}&outcome=success`,
      {
        token: w.superAdmin.token,
      },
    );
    const actions = audit.body.data;
    const approval = actions.find((a: { action: string }) => a.action === "quota_request.approve");
    expect(approval.diff.after).toMatchObject({ limits: { maxGpusPerUser: 6 } });
    expect(actions.map((a: { action: string }) => a.action).sort()).toEqual([
      "quota_request.approve",
      "quota_request.create",
    ]);
    for (const who of [w.adminA, w.superAdmin]) {
      const again = await t.request("POST", `/api/v1/resource-policies/requests/${id}/deny`, {
        token: who.token,
        json: {},
      });
      expect(again.status).toBe(409);
      expect(again.body.error).toMatchObject({
        code: "request_already_decided",
        details: { status: "partially_approved" },
      });
    }
  });

  it("a later approval for her merges into the same policy and changes only its own limit", async () => {
    const r = await ask(alice, {
      organization_id: w.orgA.id,
      limits: { max_volume_gb_per_user: 800 },
      reason: "datasets",
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.current).toEqual({ max_volume_gb_per_user: 500 });
    const ok = await t.request("POST", `/api/v1/resource-policies/requests/${r.body.id}/approve`, {
      token: w.superAdmin.token,
      json: {},
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.status).toBe("approved");
    expect((await policy(ok.body.policy)).spec.limits).toEqual({ maxGpusPerUser: 6, maxVolumeGbPerUser: 800 });
  });
});

describe("deciding", () => {
  it("refuses a decision on one's own request, whatever one's role", async () => {
    // An org admin asks for herself: neither she nor anyone but another admin decides.
    const admin = await t.aUser();
    await t.member(admin, w.orgA.id, null, "org_admin");
    const r = await ask(admin, { organization_id: w.orgA.id, limits: { max_gpus_per_user: 5 }, reason: "me" });
    expect(r.status).toBe(201);
    expect(r.body.can_decide).toBe(false);
    const self = await t.request("POST", `/api/v1/resource-policies/requests/${r.body.id}/approve`, {
      token: admin.token,
      json: {},
    });
    expect(self.status).toBe(403);
    expect(self.body.error.code).toBe("forbidden");
    const deny = await t.request("POST", `/api/v1/resource-policies/requests/${r.body.id}/deny`, {
      token: w.adminA.token,
      json: { note: "use the shared pool" },
    });
    expect(deny.status).toBe(200);
    expect(deny.body).toMatchObject({ status: "denied", decision_note: "use the shared pool", granted: null });
    const bell = await t.request("GET", "/api/v1/notifications?kind=quota.request_decided", { token: admin.token });
    expect(bell.body.data[0].body).toContain("use the shared pool");
  });

  it("of twelve concurrent approvals one wins, the others get 409, and one policy is written", async () => {
    const bob = await aMemberOfA();
    const r = await ask(bob, { organization_id: w.orgA.id, limits: { max_gpus_per_user: 7 }, reason: "race" });
    const admins = [w.adminA, w.superAdmin];
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        t.request("POST", `/api/v1/resource-policies/requests/${r.body.id}/approve`, {
          token: (admins[i % 2] as TestUser).token,
          json: {},
        }),
      ),
    );
    const codes = answers.map((a) => a.status).sort();
    expect(codes).toEqual([200, ...Array(11).fill(409)]);
    expect(answers.filter((a) => a.status === 409).every((a) => a.body.error.code === "request_already_decided")).toBe(
      true,
    );
    const mine = (await readPolicies(t.deps)).filter((p) => p.spec.scope.kind === "user" && p.spec.scope.id === bob.id);
    expect(mine.map((p) => p.spec.limits)).toEqual([{ maxGpusPerUser: 7 }]);
  });

  it("concurrent approvals of two people's requests and a project's each land, none lost", async () => {
    // A project policy exists: project requests raise it in place.
    await custom().createClusterCustomObject({
      ...POLICIES,
      body: {
        apiVersion: "berth.dev/v1alpha1",
        kind: "ResourcePolicy",
        metadata: { name: "team-a2" },
        spec: { scope: { kind: "project", id: w.projectA2.id }, limits: { maxGpusPerProject: 2, maxGpusPerUser: 1 } },
      },
    });
    const carol = await t.aUser();
    await t.member(carol, w.orgA.id, w.projectA2.id, "project_admin");
    const dave = await t.aUser();
    await t.member(dave, w.orgA.id, w.projectA2.id, "member");
    const asks = await Promise.all([
      ask(dave, {
        organization_id: w.orgA.id,
        project_id: w.projectA2.id,
        scope: "project",
        limits: { max_gpus_per_project: 6 },
        reason: "team sweep",
      }),
      ask(dave, {
        organization_id: w.orgA.id,
        project_id: w.projectA2.id,
        limits: { max_gpus_per_user: 3 },
        reason: "me",
      }),
      ask(carol, { organization_id: w.orgA.id, limits: { max_concurrent_sessions_per_user: 9 }, reason: "me too" }),
    ]);
    for (const a of asks) expect(a.status, JSON.stringify(a.body)).toBe(201);
    // The project admin may decide the project's request (not her own, not dave's personal one).
    const [project, davePersonal, carolPersonal] = asks.map((a) => a.body.id as string);
    const decided = await Promise.all([
      t.request("POST", `/api/v1/resource-policies/requests/${project}/approve`, { token: carol.token, json: {} }),
      t.request("POST", `/api/v1/resource-policies/requests/${davePersonal}/approve`, {
        token: w.adminA.token,
        json: {},
      }),
      t.request("POST", `/api/v1/resource-policies/requests/${carolPersonal}/approve`, {
        token: w.superAdmin.token,
        json: {},
      }),
    ]);
    expect(decided.map((d) => d.status)).toEqual([200, 200, 200]);
    // The project's policy changed only in the granted limit.
    expect((await policy("team-a2")).spec.limits).toEqual({ maxGpusPerProject: 6, maxGpusPerUser: 1 });
    // Dave's personal override beats the project's per-user limit.
    const l = await effective(dave, `?organization_id=${w.orgA.id}&project_id=${w.projectA2.id}`);
    expect(l.max_gpus_per_user?.value).toBe(3);
    expect(l.max_gpus_per_project).toMatchObject({ value: 6, policy: "team-a2" });
    const cant = await t.request("POST", `/api/v1/resource-policies/requests/${carolPersonal}/approve`, {
      token: carol.token,
      json: {},
    });
    expect(cant.status).toBe(403);
  });
});

describe("bad requests", () => {
  it("name each bad field: limits not requestable for the scope, not above the current one, none at all", async () => {
    const u = await aMemberOfA();
    const r = await ask(u, {
      organization_id: w.orgA.id,
      limits: { max_gpus_per_user: 4, max_gpus_per_project: 10 },
      reason: "x",
    });
    expect(r.status).toBe(400);
    const issues = r.body.error.details.issues.map((i: { path: string[]; code: string }) => [i.path.join("."), i.code]);
    expect(issues).toEqual([
      ["body.limits.max_gpus_per_user", "too_small"],
      ["body.limits.max_gpus_per_project", "not_requestable"],
    ]);
    const none = await ask(u, { organization_id: w.orgA.id, limits: {}, reason: "x" });
    expect(none.status).toBe(400);
    const unlimited = await ask(u, {
      organization_id: w.orgA.id,
      project_id: w.projectA.id,
      scope: "project",
      limits: { max_gpus_per_project: 10 },
      reason: "x",
    });
    expect(unlimited.body.error.details.issues[0]).toMatchObject({ code: "no_limit" });
    const noProject = await ask(u, { organization_id: w.orgA.id, scope: "project", limits: {}, reason: "x" });
    expect(noProject.body.error.details.issues[0].path).toEqual(["body", "project_id"]);
  });

  it("refuse another organization, a foreign project, a non-number, a missing reason and unknown fields", async () => {
    const u = await aMemberOfA();
    for (const body of [
      { organization_id: w.orgB.id, limits: { max_gpus_per_user: 8 }, reason: "x" },
      { organization_id: w.orgA.id, project_id: w.projectB.id, limits: { max_gpus_per_user: 8 }, reason: "x" },
      { organization_id: w.orgA.id, limits: { max_gpus_per_user: "8" }, reason: "x" },
      { organization_id: w.orgA.id, limits: { max_gpus_per_user: 8 } },
      { organization_id: w.orgA.id, limits: { max_gpus_per_user: 8 }, reason: "x", user_id: w.adminA.id },
      { organization_id: w.orgA.id, limits: { max_priority: 100 }, reason: "x" },
    ]) {
      const r = await ask(u, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.code).toBe("validation_failed");
    }
    const json = await t.request("POST", "/api/v1/resource-policies/requests", { token: u.token, body: "{not json" });
    expect(json.body.error.code).toBe("malformed_json");
    // Nothing was written.
    const mine = await t.request("GET", "/api/v1/resource-policies/requests?box=mine", { token: u.token });
    expect(mine.body.data).toEqual([]);
  });

  it("a cancelled request cannot be decided; only its requester cancels", async () => {
    const u = await aMemberOfA();
    const r = await ask(u, { organization_id: w.orgA.id, limits: { max_gpus_per_user: 5 }, reason: "x" });
    const other = await t.request("POST", `/api/v1/resource-policies/requests/${r.body.id}/cancel`, {
      token: w.adminA.token,
    });
    expect(other.status).toBe(403);
    const outsider = await t.request("POST", `/api/v1/resource-policies/requests/${r.body.id}/cancel`, {
      token: w.adminB.token,
    });
    expect(outsider.status).toBe(404);
    const expired = await t.request("POST", `/api/v1/resource-policies/requests/${r.body.id}/cancel`, {
      token: await t.expiredTokenFor(u.id),
    });
    expect(expired.body.error.code).toBe("token_expired");
    const c = await t.request("POST", `/api/v1/resource-policies/requests/${r.body.id}/cancel`, { token: u.token });
    expect(c.body.status).toBe("cancelled");
    const late = await t.request("POST", `/api/v1/resource-policies/requests/${r.body.id}/approve`, {
      token: w.adminA.token,
      json: {},
    });
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe("request_already_decided");
  });
});

describe("every route, by role", () => {
  /** A fresh pending request by memberA's peer in project A (so each decision has its own). */
  const pendingOfA = async () => {
    const u = await t.aUser();
    await t.member(u, w.orgA.id, w.projectA.id, "member");
    const r = await ask(u, {
      organization_id: w.orgA.id,
      limits: { max_concurrent_sessions_per_user: 5 },
      reason: "x",
    });
    return r.body.id as string;
  };
  const cases: RouteCase[] = [
    {
      name: "/resource-policies/effective",
      method: "GET",
      path: (w) => `/api/v1/resource-policies/effective?organization_id=${w.orgA.id}`,
      allowed: [
        { as: "memberA", status: 200 },
        { as: "adminA", status: 200 },
        { as: "superAdmin", status: 200 },
      ],
      refused: [
        { as: "memberB", status: 404, why: "another organization" },
        { as: "outsider", status: 404, why: "no organization" },
      ],
    },
    {
      name: "/resource-policies/requests/{id}",
      method: "GET",
      path: async () => `/api/v1/resource-policies/requests/${await pendingOfA()}`,
      allowed: [
        { as: "adminA", status: 200 },
        { as: "superAdmin", status: 200 },
      ],
      refused: [
        { as: "memberA", status: 404, why: "someone else's request" },
        { as: "projectAdminA", status: 404, why: "a person's own limits are not the project's" },
        { as: "adminB", status: 404, why: "another organization" },
        { as: "outsider", status: 404, why: "no organization" },
      ],
    },
    {
      name: "/resource-policies/requests/{id}/approve",
      method: "POST",
      path: async () => `/api/v1/resource-policies/requests/${await pendingOfA()}/approve`,
      body: () => ({}),
      allowed: [
        { as: "adminA", status: 200 },
        { as: "superAdmin", status: 200 },
      ],
      refused: [
        { as: "memberA", status: 404, why: "someone else's request" },
        { as: "adminB", status: 404, why: "another organization" },
      ],
      malformed: { limits: { max_concurrent_sessions_per_user: -1 } },
    },
    {
      name: "/resource-policies/requests/{id}/deny",
      method: "POST",
      path: async () => `/api/v1/resource-policies/requests/${await pendingOfA()}/deny`,
      body: () => ({ note: "no" }),
      allowed: [{ as: "adminA", status: 200 }],
      refused: [
        { as: "orgMemberA", status: 404, why: "someone else's request" },
        { as: "adminB", status: 404, why: "another organization" },
      ],
      malformed: { note: "" },
    },
    {
      name: "/resource-policies/requests",
      method: "POST",
      path: () => "/api/v1/resource-policies/requests",
      body: (w) => ({ organization_id: w.orgB.id, limits: { max_gpus_per_user: 5 }, reason: "x" }),
      allowed: [{ as: "memberB", status: 201 }],
      refused: [],
      malformed: { organization_id: 7 },
    },
  ];
  itBehavesPerRole(cases, () => ({ t, w }));

  it("no token is 401 unauthenticated on every route", async () => {
    for (const [m, p] of [
      ["GET", "/api/v1/resource-policies/effective"],
      ["GET", "/api/v1/resource-policies/requests"],
      ["POST", "/api/v1/resource-policies/requests"],
      ["POST", "/api/v1/resource-policies/requests/qrq_x/approve"],
    ] as const) {
      const r = await t.request(m, p);
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe("unauthenticated");
    }
  });

  it("a webhook event goes out to organization B's subscribed endpoint when a request is asked and decided", async () => {
    await t.database.db("webhook_endpoints").insert({
      id: "whk_quotatest",
      organization_id: w.orgB.id,
      url: "https://hooks.example.test/berth",
      event_types: ["quota.request.created", "quota.request.decided"],
      secret: "whsec_test",
      created_by: w.adminB.id,
      created_at: new Date(),
      updated_at: new Date(),
    });
    const u = await t.aUser();
    await t.member(u, w.orgB.id, null, "member");
    const r = await ask(u, { organization_id: w.orgB.id, limits: { max_gpus_per_user: 6 }, reason: "hook" });
    await t.request("POST", `/api/v1/resource-policies/requests/${r.body.id}/deny`, {
      token: w.adminB.token,
      json: {},
    });
    const events = (await t.database
      .db("webhook_events")
      .where({ organization_id: w.orgB.id })
      .whereRaw("payload->'data'->>'request_id' = ?", [r.body.id])
      .orderBy("created_at")
      .select("type", "payload")) as { type: string; payload: { data: Record<string, unknown> } }[];
    expect(events.map((e) => e.type)).toEqual(["quota.request.created", "quota.request.decided"]);
    expect(events[1]?.payload.data).toMatchObject({ status: "denied", decided_by: w.adminB.id, requester_id: u.id });
  });
});
