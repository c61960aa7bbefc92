// Creates that reach an organization's door together are decided in batches (admission.ts): over HTTP
// with the real API and Postgres, concurrent creates by several people must get exactly the answers
// they would get one after the other — no limit passed by one, no credits promised twice — and a batch
// must really hold several. Also what a create or resume holds when its Session write fails or gets no
// answer. The management cluster is a stand-in (catalog + Session writes).
import { OfferingKind, organizationNamespace, ResourcePolicyKind, resourcePath, VolumeKind } from "@berth/crds";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aGpuCluster } from "../../db/operations/sessions/sessions.test-support.ts";
import { expectLedgerInvariants, grant } from "../credits/credits.test-support.ts";
import { FakeManagementCluster } from "../credits/fakes.test-support.ts";
import { ensureWallet } from "../credits/wallets.ts";
import { type IdentityTestApi, startIdentityTestApi, type TestUser } from "../identity/identity.test-support.ts";
import { MAX_BATCH } from "./admission.ts";
import { makeSessionsRuntime, sessionPath } from "./runtime.ts";

const H100 = "NVIDIA-H100-80GB-HBM3";
// Ten minutes of h100 (4 credits/h), rounded up: the door's minimum run.
const TEN_MINUTES = 666_667n;

describe("creates decided together at an organization's door", () => {
  let t: IdentityTestApi;
  let kube: FakeManagementCluster;
  type Org = { id: string; people: TestUser[] };
  const orgs: Record<
    | "credits"
    | "gpus"
    | "own"
    | "many"
    | "mixed"
    | "perUser"
    | "projects"
    | "boom"
    | "resumes"
    | "resumeFails"
    | "flaky"
    | "shared"
    | "leaving",
    Org
  > = {} as never;
  let vision: string; // a project of orgs.projects with a limit of 2 GPUs; people[0] is in it
  let audio: string; // another, without a limit; people[1] is in it

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
    kube = new FakeManagementCluster();
    t = await startIdentityTestApi({ sessions: makeSessionsRuntime(kube) });
    orgs.credits = await anOrganization("Thin wallet", 8, 3n * TEN_MINUTES);
    orgs.gpus = await anOrganization("Five GPUs", 4, 1000n * TEN_MINUTES);
    orgs.own = await anOrganization("One eager person", 1, 1000n * TEN_MINUTES);
    orgs.many = await anOrganization("A class at nine", 10, 1000n * TEN_MINUTES);
    orgs.mixed = await anOrganization("Only h100, three GPUs", 2, 1000n * TEN_MINUTES);
    orgs.perUser = await anOrganization("Two GPUs each", 1, 1000n * TEN_MINUTES);
    orgs.projects = await anOrganization("Two projects", 3, 1000n * TEN_MINUTES);
    orgs.boom = await anOrganization("One bad row", 3, 1000n * TEN_MINUTES);
    orgs.resumes = await anOrganization("One session at a time", 1, 1000n * TEN_MINUTES);
    orgs.resumeFails = await anOrganization("One at a time, cluster down", 1, 1000n * TEN_MINUTES);
    orgs.flaky = await anOrganization("A flaky management cluster", 1, 1000n * TEN_MINUTES);
    orgs.shared = await anOrganization("A shared volume", 3, 1000n * TEN_MINUTES);
    orgs.leaving = await anOrganization("Someone leaves", 1, 1000n * TEN_MINUTES);
    vision = (await t.aProject(orgs.projects.id, "Vision")).id;
    audio = (await t.aProject(orgs.projects.id, "Audio")).id;
    await t.member(orgs.projects.people[0] as TestUser, orgs.projects.id, vision, "member");
    await t.member(orgs.projects.people[1] as TestUser, orgs.projects.id, audio, "member");
    // An offering on the fleet's model that orgs.mixed may not use.
    kube.objects.set(
      resourcePath(OfferingKind, { name: "h100-alt" }),
      OfferingKind.build(
        { name: "h100-alt" },
        { displayName: "H100 (other)", gpuModel: H100, tier: "premium", hourlyCreditRate: "4000000" },
      ),
    );
    /** A ResourcePolicy of one organization. */
    const orgPolicy = (name: string, org: Org, spec: Record<string, unknown>) =>
      ResourcePolicyKind.build({ name }, { scope: { kind: "organization", id: org.id }, ...spec });
    // Set before the first read: the catalog caches policies for a few seconds.
    kube.policies.push(
      ResourcePolicyKind.build(
        { name: "global" },
        { scope: { kind: "global" }, limits: { maxConcurrentSessionsPerUser: 3, maxGpusPerUser: 100 } },
      ),
      orgPolicy("five-gpus", orgs.gpus, { limits: { maxGpusPerOrganization: 5 } }),
      orgPolicy("a-class", orgs.many, { limits: { maxConcurrentSessionsPerUser: 100 } }),
      orgPolicy("mixed", orgs.mixed, { limits: { maxGpusPerOrganization: 3 }, allowedOfferings: ["h100"] }),
      orgPolicy("per-user", orgs.perUser, { limits: { maxGpusPerUser: 2 } }),
      orgPolicy("one-at-a-time", orgs.resumes, { limits: { maxConcurrentSessionsPerUser: 1 } }),
      orgPolicy("one-at-a-time-down", orgs.resumeFails, { limits: { maxConcurrentSessionsPerUser: 1 } }),
      ResourcePolicyKind.build(
        { name: "vision" },
        { scope: { kind: "project", id: vision }, limits: { maxGpusPerProject: 2 } },
      ),
    );
    await aGpuCluster(t.database.db, "clu_admission", 8);
  });
  afterAll(async () => {
    await expectLedgerInvariants(t.database.db);
    await t?.stop();
  });

  /** `n` creates sent at once, by the organization's people in turn; `extra(i)` adds to the i-th body. */
  async function together(org: Org, n: number, extra: (i: number) => Record<string, unknown> = () => ({})) {
    const answers = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        t.request("POST", "/api/v1/sessions", {
          token: (org.people[i % org.people.length] as TestUser).token,
          json: { offering: "h100", preset: "gpu-small", image: "jupyterlab", organization_id: org.id, ...extra(i) },
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
  /** Some batch since `before` held more than one create: the in-memory counting was exercised. */
  const expectBatched = async (before: { count: number; sum: number }) => {
    const after = await batchSizes();
    expect(after.sum - before.sum).toBeGreaterThan(after.count - before.count);
  };

  it("lets exactly as many in as the wallet holds minimum runs, and tells the others what is owed", async () => {
    const before = await batchSizes();
    const { answers, rows, statuses } = await together(orgs.credits, 8);
    await expectBatched(before);
    expect(statuses.filter((s) => s === 201)).toHaveLength(3);
    expect(statuses.filter((s) => s === 403)).toHaveLength(5);
    expect(rows).toHaveLength(3);
    // Every answer but a 201 is a refusal, and must be the 403 below: a 409 or 500 is not let through.
    for (const refused of answers.filter((a) => a.status !== 201)) {
      expect(refused.status).toBe(403);
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
    const before = await batchSizes();
    const { answers, rows, statuses } = await together(orgs.gpus, 12);
    await expectBatched(before);
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(rows).toHaveLength(5);
    // Every answer but a 201 is a refusal, and must be the 403 below: a 409 or 500 is not let through.
    for (const refused of answers.filter((a) => a.status !== 201)) {
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({
        code: "quota_exceeded",
        details: { limit: "maxGpusPerOrganization", value: 5, current: 5, requested: 1 },
      });
    }
  });

  it("holds one person's own limit when they send several at once", async () => {
    const before = await batchSizes();
    const { answers, rows, statuses } = await together(orgs.own, 7);
    await expectBatched(before);
    expect(statuses.filter((s) => s === 201)).toHaveLength(3);
    expect(rows).toHaveLength(3);
    // Every answer but a 201 is a refusal, and must be the 403 below: a 409 or 500 is not let through.
    for (const refused of answers.filter((a) => a.status !== 201)) {
      expect(refused.status).toBe(403);
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
    // The requests arrive while the first batch holds the door: fewer batches than requests.
    expect(after.count - before.count).toBeLessThan(n / 2);
    expect(after.count - before.count).toBeGreaterThanOrEqual(2); // MAX_BATCH caps a batch
  });
  it("does not count a refused create against the limits of the ones after it", async () => {
    // Every other request asks for an offering the organization may not use; its GPU must not count
    // against the organization's three.
    const before = await batchSizes();
    const { answers, rows, statuses } = await together(orgs.mixed, 6, (i) => ({
      offering: i % 2 === 0 ? "h100-alt" : "h100",
    }));
    await expectBatched(before);
    expect(rows.map((r) => r.offering)).toEqual(["h100", "h100", "h100"]);
    expect(statuses.filter((s) => s === 201)).toHaveLength(3);
    for (const [i, a] of answers.entries()) {
      if (i % 2 === 0) {
        expect(a.status).toBe(403);
        expect(a.body.error).toMatchObject({ code: "quota_exceeded", details: { limit: "allowedOfferings" } });
      }
    }
  });

  it("holds one person's GPU limit across a batch", async () => {
    const { answers, rows, statuses } = await together(orgs.perUser, 5);
    expect(statuses.filter((s) => s === 201)).toHaveLength(2);
    expect(rows).toHaveLength(2);
    for (const refused of answers.filter((a) => a.status !== 201)) {
      expect(refused.status).toBe(403);
      expect(refused.body.error.details).toMatchObject({ limit: "maxGpusPerUser", value: 2, current: 2, requested: 1 });
    }
  });

  it("counts each project's GPUs apart in one batch, and sessions without a project against neither", async () => {
    // people[0] in Vision (2 GPUs at most), people[1] in Audio (no limit), people[2] in no project.
    const projectOf = [vision, audio, undefined];
    const { answers, rows } = await together(orgs.projects, 9, (i) =>
      projectOf[i % 3] ? { project_id: projectOf[i % 3] } : {},
    );
    const admitted = (p: string | null) => rows.filter((r) => r.project_id === p).length;
    expect([admitted(vision), admitted(audio), admitted(null)]).toEqual([2, 3, 3]);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused).toHaveLength(1);
    expect(refused[0]?.status).toBe(403);
    expect(refused[0]?.body.error.details).toMatchObject({ limit: "maxGpusPerProject", value: 2, current: 2 });
  });

  it("answers a row that cannot be written to its own request only; the others are written and the door goes on", async () => {
    const db = t.database.db;
    await db.raw(
      "ALTER TABLE sessions ADD CONSTRAINT admission_test_no_boom CHECK (display_name IS DISTINCT FROM 'boom')",
    );
    try {
      const { answers, rows } = await together(orgs.boom, 9, (i) => ({ name: i === 4 ? "boom" : `fine-${i}` }));
      expect(answers[4]?.status).toBe(500);
      expect(answers.filter((a) => a.status === 201)).toHaveLength(8);
      expect(rows.map((r) => r.display_name).sort()).toEqual([0, 1, 2, 3, 5, 6, 7, 8].map((i) => `fine-${i}`).sort());
    } finally {
      await db.raw("ALTER TABLE sessions DROP CONSTRAINT admission_test_no_boom");
    }
    // people[1] holds two sessions (the bad row was theirs): room for one more.
    const again = await t.request("POST", "/api/v1/sessions", {
      token: (orgs.boom.people[1] as TestUser).token,
      json: { offering: "h100", preset: "gpu-small", image: "jupyterlab", organization_id: orgs.boom.id },
    });
    expect(again.status, JSON.stringify(again.body)).toBe(201);
  });

  /** A session of `org` created and then paused, in the row and the resource as the worker leaves them. */
  async function aPausedSession(org: Org): Promise<string> {
    const db = t.database.db;
    const { answers } = await together(org, 1);
    const row = await db("sessions").where({ id: answers[0]?.body.id }).first();
    await db("sessions").where({ id: row.id }).update({ desired_state: "Paused", phase: "Paused" });
    const o = kube.objects.get(sessionPath(row.namespace, row.cr_name)) as {
      spec: Record<string, unknown>;
      status?: Record<string, unknown>;
    };
    o.spec.desiredState = "Paused";
    o.status = { ...o.status, phase: "Paused" };
    return row.id as string;
  }
  const resume = (org: Org, id: string) =>
    t.request("POST", `/api/v1/sessions/${id}/resume`, { token: (org.people[0] as TestUser).token });

  it("counts a session being resumed before the worker has moved it out of Paused", async () => {
    // Resume writes desired Running; the row says Paused until the worker copies the new phase. A
    // second resume (or a create) in that moment must count the first.
    const a = await aPausedSession(orgs.resumes);
    const b = await aPausedSession(orgs.resumes); // a paused session holds nothing: room for another
    const first = await resume(orgs.resumes, a);
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    const second = await resume(orgs.resumes, b);
    expect(second.status).toBe(403);
    expect(second.body.error.details).toMatchObject({ limit: "maxConcurrentSessionsPerUser", value: 1, current: 1 });
    expect((await together(orgs.resumes, 1)).statuses).toEqual([403]);
  });

  it("takes a resume's intent back when the session's resource cannot be changed", async () => {
    const a = await aPausedSession(orgs.resumeFails);
    const request = kube.request.bind(kube);
    kube.request = (async (method: string, path: string, opts?: never) =>
      method === "PATCH" ? { status: 500, body: {} } : request(method, path, opts)) as typeof kube.request;
    try {
      expect((await resume(orgs.resumeFails, a)).status).toBe(503);
    } finally {
      kube.request = request;
    }
    expect(await t.database.db("sessions").where({ id: a }).first()).toMatchObject({ desired_state: "Paused" });
    // The resume that did not happen holds nothing: the one session allowed can be created.
    expect((await together(orgs.resumeFails, 1)).statuses).toEqual([201]);
  });

  describe("a create whose Session write gets no answer", () => {
    /** Runs `body` with the fake's Session POST failing after (`stored`) or before storing the resource. */
    async function withLostAnswer<T>(opts: { stored: boolean; readBack: boolean }, body: () => Promise<T>) {
      const request = kube.request.bind(kube);
      kube.request = (async (method: string, path: string, o?: never) => {
        if (method === "POST" && path.endsWith("/sessions")) {
          if (opts.stored) await request(method, path, o);
          throw new Error("socket hang up");
        }
        if (method === "GET" && path.includes("/sessions/") && !opts.readBack) throw new Error("ECONNRESET");
        return request(method, path, o);
      }) as typeof kube.request;
      try {
        return await body();
      } finally {
        kube.request = request;
      }
    }
    const resourceOf = async (id: string) => {
      const row = await t.database.db("sessions").where({ id }).first();
      return { row, resource: kube.objects.get(sessionPath(row.namespace, row.cr_name)) };
    };
    /** The one row `body` made in the flaky organization (the test clock stands still: created_at ties). */
    const rowMadeBy = async <T>(body: () => Promise<T>) => {
      const rows = () => t.database.db("sessions").where({ organization_id: orgs.flaky.id });
      const known = (await rows().select("id")).map((r) => r.id as string);
      const result = await body();
      const made = await rows().whereNotIn("id", known);
      expect(made).toHaveLength(1);
      return { result, row: made[0] };
    };

    it("is the create done when the resource was made after all", async () => {
      const { answers } = await withLostAnswer({ stored: true, readBack: true }, () => together(orgs.flaky, 1));
      expect(answers[0]?.status).toBe(201);
      const { row, resource } = await resourceOf(answers[0]?.body.id);
      expect(row.phase).not.toBe("Failed");
      expect(resource).toBeDefined();
    });

    it("fails, and holds nothing, when the resource was not made", async () => {
      const { result, row } = await rowMadeBy(() =>
        withLostAnswer({ stored: false, readBack: true }, () => together(orgs.flaky, 1)),
      );
      expect(result.answers[0]?.status).toBe(503);
      expect(row).toMatchObject({ phase: "Failed", reason: "CreateFailed" });
    });

    it("deletes a resource it cannot read back, so that a failed session does not come to life", async () => {
      const before = kube.deleted.length;
      const { result, row } = await rowMadeBy(() =>
        withLostAnswer({ stored: true, readBack: false }, () => together(orgs.flaky, 1)),
      );
      expect(result.answers[0]?.status).toBe(503);
      expect(row).toMatchObject({ phase: "Failed", reason: "CreateFailed" });
      expect(kube.deleted.slice(before)).toEqual([sessionPath(row.namespace, row.cr_name)]);
      expect(kube.objects.has(sessionPath(row.namespace, row.cr_name))).toBe(false);
    });
  });

  it("mounts a volume reached only through a read-only share read-only, and refuses to mount it writable", async () => {
    const [owner, reader, writer] = orgs.shared.people as [TestUser, TestUser, TestUser];
    const namespace = organizationNamespace(orgs.shared.id);
    kube.objects.set(
      resourcePath(VolumeKind, { namespace, name: "data" }),
      VolumeKind.build(
        { name: "data", namespace },
        {
          owner: { kind: "user", id: owner.id },
          organization: orgs.shared.id,
          sizeGb: 10,
          shares: [
            { kind: "user", id: reader.id, access: "ReadOnly" },
            { kind: "user", id: writer.id, access: "ReadWrite" },
          ],
          locked: false,
        },
      ),
    );
    const create = (u: TestUser, volume: Record<string, unknown>) =>
      t.request("POST", "/api/v1/sessions", {
        token: u.token,
        json: {
          offering: "h100",
          preset: "gpu-small",
          image: "jupyterlab",
          organization_id: orgs.shared.id,
          volumes: [{ volume: "data", ...volume }],
        },
      });
    const mounted = async (u: TestUser, volume: Record<string, unknown>) => {
      const res = await create(u, volume);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const row = await t.database.db("sessions").where({ id: res.body.id }).first();
      const cr = kube.objects.get(sessionPath(row.namespace, row.cr_name)) as { spec: { volumes: unknown[] } };
      return cr.spec.volumes[0];
    };
    expect(await mounted(reader, {})).toMatchObject({ volume: "data", readOnly: true });
    const refused = await create(reader, { read_only: false });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: "forbidden", details: { volume: "data", access: "ReadOnly" } });
    expect(await mounted(writer, {})).toMatchObject({ readOnly: false });
    expect(await mounted(owner, { read_only: true })).toMatchObject({ readOnly: true });
  });

  it("pauses, and no longer lists, shows or lets act on, a session of an owner removed from its organization", async () => {
    const [person] = orgs.leaving.people as [TestUser];
    const { answers } = await together(orgs.leaving, 1);
    const id = answers[0]?.body.id as string;
    const listed = async () =>
      (await t.request("GET", "/api/v1/sessions?scope=mine&size=100", { token: person.token })).body.data.map(
        (x: { id: string }) => x.id,
      );
    expect(await listed()).toContain(id);
    const admin = await t.aUser({ superAdmin: true });
    const removed = await t.request("DELETE", `/api/v1/organizations/${orgs.leaving.id}/members/${person.id}`, {
      token: admin.token,
    });
    expect(removed.status).toBe(204);
    // Paused by the system (after the answer): it stops drawing on the organization's wallets.
    await expect
      .poll(async () => (await t.database.db("sessions").where({ id }).first()).desired_state, { timeout: 10_000 })
      .toBe("Paused");
    const row = await t.database.db("sessions").where({ id }).first();
    const path = sessionPath(row.namespace, row.cr_name);
    expect((kube.objects.get(path) as { spec: { desiredState: string } }).spec.desiredState).toBe("Paused");
    const patch = kube.patches.filter((p) => p.path === path).at(-1)?.body as {
      metadata: { annotations: Record<string, string> };
    };
    expect(Object.values(patch.metadata.annotations)).toContain("MemberRemoved");
    t.clock.advance(10); // past the principal cache
    expect(await listed()).not.toContain(id);
    expect((await t.request("GET", `/api/v1/sessions/${id}`, { token: person.token })).status).toBe(404);
    expect((await t.request("POST", `/api/v1/sessions/${id}/pause`, { token: person.token })).status).toBe(404);
  });

  it("tells the owner when an administrator pauses their session, and not when they pause it themselves", async () => {
    const org = await anOrganization("Paused by an administrator", 1, 1000n * TEN_MINUTES);
    const [person] = org.people as [TestUser];
    const { answers } = await together(org, 2);
    const [mine, theirs] = answers.map((a) => a.body.id as string) as [string, string];
    expect((await t.request("POST", `/api/v1/sessions/${mine}/pause`, { token: person.token })).status).toBe(202);
    const admin = await t.aUser({ superAdmin: true });
    expect((await t.request("POST", `/api/v1/sessions/${theirs}/pause`, { token: admin.token })).status).toBe(202);
    const bell = await t.request("GET", "/api/v1/notifications", { token: person.token });
    expect(bell.body.data).toEqual([
      expect.objectContaining({
        kind: "session.paused",
        data: { session_id: theirs, reason: "administrator", by: admin.id },
      }),
    ]);
    expect(bell.body.data[0].body).toContain(admin.email);
  });
});
