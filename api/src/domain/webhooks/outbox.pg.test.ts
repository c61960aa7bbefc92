// The outbox's triggers for credits, on real Postgres: each change writes its event in its own
// transaction, only for organizations with a subscribed, enabled endpoint; a rolled-back change leaves none.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../db/db.test-support.ts";
import { insertEndpoint } from "../../db/operations/webhooks/insertEndpoint.ts";
import { newEndpointId } from "./endpoints.ts";
import { newWebhookSecret } from "./signing.ts";

describe("the webhook outbox's triggers", () => {
  let database: TestDatabase;
  const at = new Date("2026-11-26T10:00:00Z");
  const db = () => database.db;
  const events = async (org: string) =>
    // In commit order: the deliveries' serial (the events' times tie here).
    (await db()("webhook_events as ev")
      .join("webhook_deliveries as d", "d.event_id", "ev.id")
      .where("ev.organization_id", org)
      .orderBy("d.id")
      .select("ev.type", "ev.payload")) as {
      type: string;
      payload: { type: string; timestamp: string; data: Record<string, unknown> };
    }[];

  beforeAll(async () => {
    database = await createTestDatabase();
    for (const [org, types, enabled] of [
      ["org_a", [], true],
      ["org_b", ["session.running"], true],
      ["org_c", [], false],
    ] as const) {
      await insertEndpoint(db(), {
        id: newEndpointId(),
        organizationId: org,
        url: "https://hooks.example.test/",
        description: "",
        eventTypes: [...types],
        secret: newWebhookSecret(),
        createdBy: "usr_x",
        at,
      });
      if (!enabled) await db()("webhook_endpoints").where({ organization_id: org }).update({ enabled: false });
    }
    for (const org of ["org_a", "org_b", "org_c"]) {
      await db()("wallets").insert({
        id: `wal_${org}`,
        organization_id: org,
        owner_kind: "organization",
        owner_id: org,
      });
      await db()("wallets").insert({ id: `wal_u_${org}`, organization_id: org, owner_kind: "user", owner_id: "usr_m" });
    }
  });
  afterAll(async () => {
    await database.drop();
  });

  it("writes credit requests asked and decided, refills applied and running-low alerts", async () => {
    for (const org of ["org_a", "org_b", "org_c"]) {
      await db()("credit_requests").insert({
        id: `crq_${org}`,
        wallet_id: `wal_u_${org}`,
        organization_id: org,
        requester_id: "usr_m",
        amount: 5_000_000,
        reason: "a run",
        created_at: at,
      });
      await db()("credit_requests")
        .where({ id: `crq_${org}` })
        .update({ status: "approved", approved_amount: 5_000_000, decided_by: "usr_admin", decided_at: at });
      await db()("credit_requests")
        .where({ id: `crq_${org}` })
        .update({ decision_note: "not an event" });
      await db()("refills").insert({
        id: `rfl_${org}`,
        wallet_id: `wal_u_${org}`,
        source_wallet_id: `wal_${org}`,
        organization_id: org,
        mode: "add",
        amount: 1_000_000,
        period: "daily",
        starts_at: at,
        created_by: "usr_admin",
        created_at: at,
        updated_at: at,
      });
      await db()("refill_applications").insert({
        refill_id: `rfl_${org}`,
        period_start: at,
        requested: 1_000_000,
        moved: 1_000_000,
        applied_at: at,
      });
      await db()("sessions").insert({
        id: `ses_${org}`,
        cr_name: `ses-${org}`,
        namespace: org,
        owner_id: "usr_m",
        organization_id: org,
        offering: "h100",
        preset: "p",
        image: "i",
        gpu_model: "H100",
        gpu_count: 1,
        hourly_credit_rate: "1",
      });
      await db()("billing_alerts").insert({ session_id: `ses_${org}`, kind: "warned", at });
    }
    const a = await events("org_a");
    expect(a.map((e) => e.type)).toEqual([
      "credits.request.created",
      "credits.request.decided",
      "credits.refill.applied",
      "credits.running_low",
    ]);
    expect(a[1]?.payload).toMatchObject({
      type: "credits.request.decided",
      timestamp: "2026-11-26T10:00:00.000Z",
      data: { request_id: "crq_org_a", status: "approved", approved_amount: "5000000", decided_by: "usr_admin" },
    });
    expect(a[2]?.payload.data).toMatchObject({ refill_id: "rfl_org_a", moved: "1000000" });
    expect(a[3]?.payload.data).toMatchObject({ session_id: "ses_org_a" });
    expect(await events("org_b")).toEqual([]); // subscribed to session.running only
    expect(await events("org_c")).toEqual([]); // its endpoint is disabled
    expect(await db()("webhook_deliveries").count({ c: "*" })).toEqual([{ c: "4" }]);
  });

  it("leaves no event behind a change that rolled back", async () => {
    await expect(
      db().transaction(async (trx) => {
        await trx("credit_requests").insert({
          id: "crq_rolled",
          wallet_id: "wal_u_org_a",
          organization_id: "org_a",
          requester_id: "usr_m",
          amount: 1,
          reason: "x",
          created_at: at,
        });
        throw new Error("the change failed after its insert");
      }),
    ).rejects.toThrow();
    const rows = await db()("webhook_events").whereRaw("payload->'data'->>'request_id' = 'crq_rolled'");
    expect(rows).toEqual([]);
  });

  describe("volumes, nodes and clusters", () => {
    const kinds = async (org: string) =>
      (await events(org)).map((e) => e.type).filter((t) => !t.startsWith("credits."));

    beforeAll(async () => {
      await db()("organizations").insert({ id: "org_a", name: "A", slug: "a" });
      // Another organization, subscribed to drained nodes only: fleet events fan out per organization.
      await insertEndpoint(db(), {
        id: newEndpointId(),
        organizationId: "org_d",
        url: "https://hooks.example.test/d",
        description: "",
        eventTypes: ["node.drained"],
        secret: newWebhookSecret(),
        createdBy: "usr_x",
        at,
      });
    });

    it("writes a volume's creation, resize and deletion to its organization", async () => {
      const base = {
        organization_id: "org_a",
        owner_kind: "user",
        owner_id: "usr_m",
        pool: "pool-a",
        namespace: "organization-org_a",
        cr_name: "vol-1",
        created_by: "usr_m",
        created_at: at,
        updated_at: at,
      };
      await db()("volumes").insert({ ...base, id: "vol_1", name: "data", size_gb: 10 });
      await db()("volumes")
        .where({ id: "vol_1" })
        .update({ size_gb: 20, updated_at: new Date(at.getTime() + 1000) });
      await db()("volumes").where({ id: "vol_1" }).update({ name: "renamed, no event" });
      await db()("volumes")
        .where({ id: "vol_1" })
        .update({ deleted_at: new Date(at.getTime() + 2000) });
      expect(await kinds("org_a")).toEqual(["volume.created", "volume.resized", "volume.deleted"]);
      const resized = (await events("org_a")).find((e) => e.type === "volume.resized");
      expect(resized?.payload.data).toMatchObject({
        volume_id: "vol_1",
        organization_id: "org_a",
        owner_id: "usr_m",
        size_gb: 20,
        previous_size_gb: 10,
      });
      expect(await kinds("org_d")).toEqual([]);
    });

    it("writes node actions that did something, and cluster health, to every subscribed organization", async () => {
      await db()("clusters").insert({ id: "clu_east", name: "east", session_domain: "east.example.test" });
      for (const [action, outcome] of [
        ["cordon", "success"],
        ["drain", "partial"],
        ["uncordon", "failure"], // failed: nothing changed, no event
        ["delete", "success"],
      ])
        await db()("cluster_node_actions").insert({
          cluster_id: "clu_east",
          node_name: "gpu-1",
          action,
          outcome,
          actor_id: "usr_admin",
          result: "{}",
        });
      await db()("clusters").where({ id: "clu_east" }).update({ unreachable_since: at });
      await db()("clusters").where({ id: "clu_east" }).update({ unreachable_since: null });
      expect((await kinds("org_a")).slice(-5)).toEqual([
        "node.cordoned",
        "node.drained",
        "node.deleted",
        "cluster.unreachable",
        "cluster.reachable",
      ]);
      const drained = (await events("org_d")).map((e) => e.payload);
      expect(drained).toEqual([
        expect.objectContaining({
          type: "node.drained",
          data: expect.objectContaining({
            cluster_id: "clu_east",
            node: "gpu-1",
            outcome: "partial",
            organization_id: "org_d",
          }),
        }),
      ]);
      expect(await events("org_b")).toEqual([]);
      expect(await events("org_c")).toEqual([]);
    });
  });

  describe("private images", () => {
    const imageKinds = async (org: string) =>
      (await events(org)).map((e) => e.type).filter((t) => t.startsWith("image."));
    const image = (id: string, source: "import" | "build", org = "org_a") => ({
      id,
      owner_id: "usr_m",
      organization_id: org,
      source,
      source_reference: source === "import" ? "docker.io/library/python:3.12" : null,
      display_name: `image ${id}`,
      kind: "jupyterlab",
      repository: `${org}/usr_m/${id}`,
      tag: "v1",
      state: source === "import" ? "importing" : "building",
      created_at: at,
      updated_at: at,
    });
    const build = (id: string, imageId: string, org = "org_a") => ({
      id,
      owner_id: "usr_m",
      organization_id: org,
      image_id: imageId,
      input_hash: `hash-${id}`,
      dockerfile: "FROM base\n",
      state: "queued",
      cluster_id: "clu_build",
      job_name: `build-${id}`,
      created_at: at,
    });

    it("writes a build's end (succeeded, failed, cancelled) once, and an import's (ready, failed)", async () => {
      for (const org of ["org_a", "org_c"]) {
        await db()("private_images").insert([
          image(`img-ok-${org}`, "build", org),
          image(`img-bad-${org}`, "build", org),
          image(`img-gone-${org}`, "build", org),
        ]);
        await db()("image_builds").insert([
          build(`bld-ok-${org}`, `img-ok-${org}`, org),
          build(`bld-bad-${org}`, `img-bad-${org}`, org),
          build(`bld-gone-${org}`, `img-gone-${org}`, org),
        ]);
        await db()("image_builds")
          .where({ id: `bld-ok-${org}` })
          .update({ state: "running", started_at: at });
        await db()("image_builds")
          .where({ id: `bld-ok-${org}` })
          .update({ reported_digest: `sha256:${"a".repeat(64)}` });
        // The built image's own row turning ready is the build's business: no import event.
        await db()("private_images")
          .where({ id: `img-ok-${org}` })
          .update({ state: "ready", ready_at: at });
        await db()("image_builds")
          .where({ id: `bld-ok-${org}` })
          .update({ state: "succeeded", finished_at: at });
        await db()("image_builds")
          .where({ id: `bld-bad-${org}` })
          .update({ state: "failed", failure_reason: "the build failed: exit 1", finished_at: at });
        await db()("image_builds")
          .where({ id: `bld-gone-${org}` })
          .update({ state: "cancelled", cancel_requested: true, finished_at: at });
        // A finished build changing again (cleanup) is no second event.
        await db()("image_builds")
          .where({ id: `bld-bad-${org}` })
          .update({ state: "failed", log_truncated: true });

        await db()("private_images").insert([
          image(`img-imp-${org}`, "import", org),
          image(`img-nf-${org}`, "import", org),
        ]);
        await db()("private_images")
          .where({ id: `img-imp-${org}` })
          .update({ bytes_copied: 10 });
        await db()("private_images")
          .where({ id: `img-imp-${org}` })
          .update({ state: "ready", digest: `sha256:${"b".repeat(64)}`, size_bytes: 1234, ready_at: at });
        await db()("private_images")
          .where({ id: `img-nf-${org}` })
          .update({ state: "failed", failure_code: "not_found", failure_reason: "no such image" });
      }
      expect(await imageKinds("org_a")).toEqual([
        "image.build.succeeded",
        "image.build.failed",
        "image.build.cancelled",
        "image.import.ready",
        "image.import.failed",
      ]);
      const payloads = (await events("org_a")).filter((e) => e.type.startsWith("image.")).map((e) => e.payload);
      expect(payloads[0]?.data).toMatchObject({
        build_id: "bld-ok-org_a",
        image_id: "img-ok-org_a",
        organization_id: "org_a",
        owner_id: "usr_m",
        state: "succeeded",
        digest: `sha256:${"a".repeat(64)}`,
        repository: "org_a/usr_m/img-ok-org_a",
        tag: "v1",
      });
      expect(payloads[1]?.data).toMatchObject({ state: "failed", reason: "the build failed: exit 1", digest: null });
      expect(payloads[2]?.data).toMatchObject({ state: "cancelled", cancel_requested: true });
      expect(payloads[3]?.data).toMatchObject({
        image_id: "img-imp-org_a",
        source_reference: "docker.io/library/python:3.12",
        digest: `sha256:${"b".repeat(64)}`,
        size_bytes: "1234",
      });
      expect(payloads[4]?.data).toMatchObject({ failure_code: "not_found", reason: "no such image" });
      // org_b subscribes to session.running only; org_c's endpoint is disabled.
      expect(await imageKinds("org_b")).toEqual([]);
      expect(await imageKinds("org_c")).toEqual([]);
    });
  });

  describe("bodies under 20 KB", () => {
    const bodyOf = async (source: string) => {
      const row = await db()("webhook_events").where({ source }).first("payload");
      return row?.payload as { type: string; data: Record<string, unknown> };
    };

    it("cuts a long failure reason to 1 KiB and says so; short bodies are untouched", async () => {
      await db()("private_images").insert({
        id: "img-long",
        owner_id: "usr_m",
        organization_id: "org_a",
        source: "build",
        display_name: "long",
        kind: "terminal",
        repository: "org_a/usr_m/long",
        tag: "v1",
        state: "building",
        created_at: at,
        updated_at: at,
      });
      await db()("image_builds").insert({
        id: "bld-long",
        owner_id: "usr_m",
        organization_id: "org_a",
        image_id: "img-long",
        input_hash: "hash-long",
        dockerfile: "FROM base\n",
        state: "queued",
        cluster_id: "clu_build",
        job_name: "build-long",
        created_at: at,
      });
      const reason = `the build failed: ${"x".repeat(30_000)}`;
      await db()("image_builds")
        .where({ id: "bld-long" })
        .update({ state: "failed", failure_reason: reason, finished_at: at });
      const body = await bodyOf("image_builds:bld-long:failed");
      expect(Buffer.byteLength(JSON.stringify(body))).toBeLessThan(20_000);
      expect(body.data).toMatchObject({ build_id: "bld-long", state: "failed", truncated: true });
      expect(body.data.reason).toBe(`${reason.slice(0, 1024)}…`);
      const short = await bodyOf("image_builds:bld-ok-org_a:succeeded");
      expect(short.data.truncated).toBeUndefined();
    });

    it("keeps only the scalar fields when cutting strings is not enough", async () => {
      const data: Record<string, unknown> = { session_id: "ses_big", amount: "12.5", count: 3, nested: { a: "b" } };
      for (let i = 0; i < 40; i++) data[`field_${i}`] = "y".repeat(2_000);
      await db().raw(
        "SELECT berth_webhook_enqueue('org_a', 'session.failed', 'ses_big', ?::jsonb, now(), 'test:big')",
        [JSON.stringify(data)],
      );
      const body = await bodyOf("test:big");
      expect(Buffer.byteLength(JSON.stringify(body))).toBeLessThan(20_000);
      expect(body.data).toMatchObject({ session_id: "ses_big", amount: "12.5", count: 3, truncated: true });
      expect(body.data.nested).toBeUndefined();
      expect(body.data.field_0).toBe(`${"y".repeat(256)}…`);
    });
  });
});
