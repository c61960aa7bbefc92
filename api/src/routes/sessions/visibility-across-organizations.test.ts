// Sessions never cross an organization's border. An organization admin's `scope=all` is their
// organization's sessions and queue, not everyone's; another organization's member or admin asking for a
// session by id meets a 404, as if it did not exist. Two organizations, each with a running and a queued
// session, so a rule widened to "every organization" shows at once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aSession } from "../../domain/credits/credits.test-support.ts";
import {
  anIdentityWorld,
  type IdentityTestApi,
  type IdentityWorld,
  startIdentityTestApi,
} from "../../domain/identity/identity.test-support.ts";

describe("sessions across two organizations", () => {
  let t: IdentityTestApi;
  let w: IdentityWorld;
  const ids = { runningA: "", queuedA: "", runningB: "", queuedB: "" };

  beforeAll(async () => {
    t = await startIdentityTestApi();
    w = await anIdentityWorld(t);
    const db = t.database.db;
    const inA = { ownerId: w.memberA.id, organizationId: w.orgA.id, projectId: w.projectA.id };
    const inB = { ownerId: w.memberB.id, organizationId: w.orgB.id, projectId: w.projectB.id };
    // Ids as the API makes them (ses_ and 20 characters), so the routes take them.
    const id = (n: number) => `ses_crossorgsession${String(n).padStart(5, "0")}`;
    ids.runningA = (await aSession(db, { ...inA, id: id(1) })).id;
    ids.queuedA = (await aSession(db, { ...inA, id: id(2), phase: "Queued" })).id;
    ids.runningB = (await aSession(db, { ...inB, id: id(3) })).id;
    ids.queuedB = (await aSession(db, { ...inB, id: id(4), phase: "Queued" })).id;
  });
  afterAll(async () => {
    await t?.stop();
  });

  const listed = async (path: string, token: string): Promise<string[]> => {
    const r = await t.request("GET", path, { token });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return (r.body.data as { id?: string; session?: { id: string } }[]).map((x) => x.session?.id ?? x.id ?? "");
  };

  it("answers an organization admin's scope=all with their own organization's sessions only", async () => {
    const a = await listed("/api/v1/sessions?scope=all", w.adminA.token);
    expect(a).toEqual(expect.arrayContaining([ids.runningA, ids.queuedA]));
    expect(a).not.toContain(ids.runningB);
    expect(a).not.toContain(ids.queuedB);
    const b = await listed("/api/v1/sessions?scope=all", w.adminB.token);
    expect(b).toEqual(expect.arrayContaining([ids.runningB, ids.queuedB]));
    expect(b).not.toContain(ids.runningA);
  });

  it("answers an organization admin's queue with scope=all with their own organization's waiting sessions only", async () => {
    const a = await listed("/api/v1/queue?scope=all", w.adminA.token);
    expect(a).toEqual([ids.queuedA]);
    const b = await listed("/api/v1/queue?scope=all", w.adminB.token);
    expect(b).toEqual([ids.queuedB]);
  });

  it("gives a super_admin's scope=all both organizations", async () => {
    const all = await listed("/api/v1/sessions?scope=all&size=100", w.superAdmin.token);
    expect(all).toEqual(expect.arrayContaining(Object.values(ids)));
  });

  it("answers another organization's member and admin 404 for a session by id", async () => {
    for (const token of [w.memberB.token, w.adminB.token]) {
      const r = await t.request("GET", `/api/v1/sessions/${ids.runningA}`, { token });
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe("not_found");
    }
  });
});
