// A create whose API died before it stored the answer for its Idempotency-Key: once the key may be taken
// over, the retry finds the session the first attempt made (one session, the same id), and a first attempt
// that died between its row and its resource is marked failed and answered 503, so the next retry makes
// one new session. The management cluster is a stand-in (catalog + Session writes).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aGpuCluster } from "../../db/operations/sessions/sessions.test-support.ts";
import { FakeManagementCluster } from "../credits/fakes.test-support.ts";
import { grantToOrganization } from "../credits/grant.ts";
import { type IdentityTestApi, startIdentityTestApi, type TestUser } from "../identity/identity.test-support.ts";
import { makeSessionsRuntime } from "./runtime.ts";

let t: IdentityTestApi;
let kube: FakeManagementCluster;
let member: TestUser;
let orgId: string;

beforeAll(async () => {
  kube = new FakeManagementCluster();
  t = await startIdentityTestApi({ sessions: makeSessionsRuntime(kube) });
  member = await t.aUser();
  orgId = (await t.anOrganization("Crash")).id;
  await t.member(member, orgId, null, "member");
  await aGpuCluster(t.database.db, "clu_crash", 8);
  await grantToOrganization(t.database.db, {
    organizationId: orgId,
    amount: 1_000_000_000n,
    actorKind: "system",
    actorId: null,
    reason: "test",
    at: t.clock.now(),
  });
});
afterAll(async () => {
  await t?.stop();
});

const create = (key: string) =>
  t.request("POST", "/api/v1/sessions", {
    token: member.token,
    json: { offering: "h100", preset: "gpu-small", image: "jupyterlab", organization_id: orgId },
    headers: { "Idempotency-Key": key },
  });

/** What a process killed after the handler and before storing its answer leaves: the key still in flight. */
async function dieBeforeTheAnswer(key: string): Promise<void> {
  const n = await t.database
    .db("idempotency_keys")
    .where({ key })
    .update({ state: "in_flight", status: null, response: null, response_headers: null });
  expect(n).toBe(1);
}

const sessionsOfOrg = async () => (await t.database.db("sessions").where({ organization_id: orgId })).length;
const resourcesMade = () => kube.created.filter((c) => c.path.endsWith("/sessions")).length;

describe("a create taken over after its API died", () => {
  it("answers with the session the first attempt made, and makes no second one", async () => {
    const first = await create("crash-1");
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    await dieBeforeTheAnswer("crash-1");
    const [rows, resources] = [await sessionsOfOrg(), resourcesMade()];

    // Within the in-flight window the key is still someone's.
    expect((await create("crash-1")).body.error?.code).toBe("idempotency_request_in_flight");
    t.clock.advance(301);
    const retry = await create("crash-1");
    expect(retry.status, JSON.stringify(retry.body)).toBe(201);
    expect(retry.body.id).toBe(first.body.id);
    expect(await sessionsOfOrg()).toBe(rows);
    expect(resourcesMade()).toBe(resources);
    // Its answer is stored now: a third try is a replay.
    const replay = await create("crash-1");
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body.id).toBe(first.body.id);
  });

  it("marks a session left without its resource failed, answers 503, and the next retry makes one new session", async () => {
    const first = await create("crash-2");
    expect(first.status).toBe(201);
    const made = kube.created.find(
      (c) => c.path.endsWith("/sessions") && JSON.stringify(c.body).includes(first.body.resource_name),
    );
    kube.objects.delete(`${made?.path}/${first.body.resource_name}`); // the crash came before the resource
    await dieBeforeTheAnswer("crash-2");
    t.clock.advance(301);

    const retry = await create("crash-2");
    expect(retry.status, JSON.stringify(retry.body)).toBe(503);
    expect(retry.body.error).toMatchObject({ code: "unavailable", details: { session_id: first.body.id } });
    const row = await t.database.db("sessions").where({ id: first.body.id }).first();
    expect(row).toMatchObject({ phase: "Failed", reason: "CreateFailed" });

    const again = await create("crash-2");
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect(again.body.id).not.toBe(first.body.id);
  });

  it("gives two keys, and two callers with one key, different sessions", async () => {
    const a = await create("distinct-a");
    const b = await create("distinct-b");
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(a.body.id).not.toBe(b.body.id);
    const other = await t.aUser();
    await t.member(other, orgId, null, "member");
    const theirs = await t.request("POST", "/api/v1/sessions", {
      token: other.token,
      json: { offering: "h100", preset: "gpu-small", image: "jupyterlab", organization_id: orgId },
      headers: { "Idempotency-Key": "distinct-a" },
    });
    expect(theirs.status).toBe(201);
    expect(theirs.body.id).not.toBe(a.body.id);
  });
});
