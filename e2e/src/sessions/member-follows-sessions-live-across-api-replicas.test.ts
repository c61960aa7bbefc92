// The console listens to GET /api/v1/sessions/events. Events written through one API replica reach a
// stream held by another; a dropped stream resumes from Last-Event-ID on any replica without losing or
// repeating an event; a stream carries only what its user may see, and says it is alive.

import { startTestApi, type TestApi } from "@berth/api/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bedApi } from "../api-client.ts";
import { openEventStream, type SessionsBed, startSessionsBed } from "./harness.ts";

// Journeys wait on real clusters; a loaded machine (other beds running) stretches them.
vi.setConfig({ testTimeout: 180_000 });

let bed: SessionsBed;
let replica: TestApi;
beforeAll(async () => {
  bed = await startSessionsBed();
  // A second API process in all but the process: its own deps (own LISTEN connection, own hub).
  replica = await startTestApi({ ...bed.t.deps });
});
afterAll(async () => {
  await replica?.stop();
  await bed?.stop();
});

const terminal = { offering: "l4", preset: "gpu-small", image: "terminal" };

describe("the event stream", () => {
  it("delivers changes made through another replica, and resumes from Last-Event-ID on any replica", async () => {
    const onReplica = await openEventStream(`${replica.url}/api/v1/sessions/events`, bed.alice.token);
    expect(onReplica.headers.get("content-type")).toContain("text/event-stream");
    await onReplica.waitFor((e) => e.event === "heartbeat", "a first heartbeat");

    const id = (await bedApi(bed, bed.alice).call("createSession", { body: terminal })).id;
    await onReplica.waitFor((e) => e.data.session_id === id && e.event === "session.created", "created");
    await onReplica.waitFor((e) => e.data.session_id === id && e.data.session.phase === "Running", "Running");
    const lastSeen = onReplica.events.filter((e) => e.event.startsWith("session.")).at(-1)?.id as string;
    await onReplica.close();

    // Missed while disconnected: pause and its phases.
    await bedApi(bed, bed.alice).call("pauseSession", { params: { sessionId: id } });
    await bed.waitFor(bed.alice, id, (s) => s.phase === "Paused", "Paused");

    const resumed = await openEventStream(`${bed.t.api.url}/api/v1/sessions/events`, bed.alice.token, lastSeen);
    try {
      await resumed.waitFor((e) => e.data.session_id === id && e.data.session.phase === "Paused", "the missed Paused");
      const replayed = resumed.events.filter((e) => e.event.startsWith("session."));
      expect(replayed.every((e) => BigInt(e.id as string) > BigInt(lastSeen))).toBe(true);
      expect(replayed.map((e) => e.data.session.phase)).toEqual(expect.arrayContaining(["Pausing", "Paused"]));
      expect(new Set(replayed.map((e) => e.id)).size).toBe(replayed.length);
    } finally {
      await resumed.close();
    }
  });

  it("shows a member only the sessions they may see; an organization admin sees the organization's", async () => {
    const forBob = await openEventStream(`${bed.t.api.url}/api/v1/sessions/events`, bed.bob.token);
    const forAdmin = await openEventStream(`${replica.url}/api/v1/sessions/events`, bed.orgAdmin.token);
    try {
      const id = (await bedApi(bed, bed.alice).call("createSession", { body: terminal })).id;
      await forAdmin.waitFor(
        (e) => e.data.session_id === id && e.data.session.phase === "Running",
        "the admin sees alice's session run",
      );
      expect(forBob.events.some((e) => e.data.session_id === id)).toBe(false);
    } finally {
      await forBob.close();
      await forAdmin.close();
    }
    expect((await fetch(`${bed.t.api.url}/api/v1/sessions/events`)).status).toBe(401);
  });

  it("ends a stream whose token no longer holds (the account disabled) with an error event", async () => {
    const carol = await bed.t.aUser();
    await bed.t.member(carol, bed.org.id, null, "member");
    const stream = await openEventStream(`${bed.t.api.url}/api/v1/sessions/events`, carol.token);
    try {
      await stream.waitFor((e) => e.event === "heartbeat", "a first heartbeat");
      await bed.t.database.db("users").where({ id: carol.id }).update({ disabled: true });
      bed.t.clock.advance(10); // past the principal cache's 5 s (the test API's clock stands still)
      // Checked again at the next heartbeat (every 15 s).
      const ended = await stream.waitFor((e) => e.event === "error", "the stream's end", 60_000);
      expect(ended.data.error.code).toBe("unauthenticated");
    } finally {
      await stream.close();
    }
  });

  it("refuses an id it never hands out with 400, before the stream starts", async () => {
    const url = `${bed.t.api.url}/api/v1/sessions/events`;
    const auth = { authorization: `Bearer ${bed.alice.token}` };
    const tooBig = "99999999999999999999"; // beyond Postgres' bigint
    for (const res of [
      await fetch(url, { headers: { ...auth, "Last-Event-ID": tooBig } }),
      await fetch(url, { headers: { ...auth, "Last-Event-ID": "abc" } }),
      await fetch(`${url}?last_event_id=${tooBig}`, { headers: auth }),
    ]) {
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("validation_failed");
    }
  });
});
