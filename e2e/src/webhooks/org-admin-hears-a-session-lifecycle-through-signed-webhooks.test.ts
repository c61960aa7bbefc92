// An organization admin registers a webhook; a member's session goes through its whole life on a real
// fleet (worker, operator, kube-apiservers), and the receiver hears every step, in order, once per
// webhook-id, each signature checked by the independent `standardwebhooks` package.
import { type Receiver, startReceiver, WebhookGuard } from "@berth/api/testing";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { answered, bedApi, refusalOf } from "../api-client.ts";
import { type SessionsBed, startSessionsBed } from "../sessions/harness.ts";

vi.setConfig({ testTimeout: 180_000 });

let bed: SessionsBed;
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
  bed = await startSessionsBed({
    workerWebhooks: { allowHosts: ["127.0.0.1"], ca: receiver.ca, pollMs: 200 },
  });
  // The operator trusts the local receiver (BERTH_WEBHOOK_ALLOW_HOSTS=127.0.0.1 in the API too).
  bed.t.deps.webhooks = { ...bed.t.deps.webhooks, guard: new WebhookGuard({ allowHosts: ["127.0.0.1"] }) };
});
afterAll(async () => {
  await bed?.stop();
  await receiver?.stop();
});

const session = { offering: "h100", preset: "gpu-small", image: "jupyterlab" };

describe("webhooks on a real fleet", () => {
  it("delivers created, running, paused, resumed, running and terminated for a session, in order, signed", async () => {
    const created = await answered(bed, bed.orgAdmin, (api) =>
      api.call("createWebhook", {
        body: { organization_id: bed.org.id, url: receiver.url, description: "the team's automation" },
      }),
    );
    expect(created.status).toBe(201);
    const secret = created.body.secret;

    const id = (await bedApi(bed, bed.alice).call("createSession", { body: session })).id;
    const params = { sessionId: id };
    await bed.waitFor(bed.alice, id, (s) => s.phase === "Running", "Running");
    expect((await answered(bed, bed.alice, (api) => api.call("pauseSession", { params }))).status).toBe(202);
    await bed.waitFor(bed.alice, id, (s) => s.phase === "Paused", "Paused");
    expect((await answered(bed, bed.alice, (api) => api.call("resumeSession", { params }))).status).toBe(202);
    await bed.waitFor(bed.alice, id, (s) => s.phase === "Running", "Running again");
    expect((await answered(bed, bed.alice, (api) => api.call("terminateSession", { params }))).status).toBe(202);
    await bed.waitFor(bed.alice, id, (s) => s.phase === "Terminated", "Terminated");

    const verifier = new Webhook(secret);
    const typesOf = () =>
      receiver.received
        .map((r) => verifier.verify(r.body, r.headers) as { type: string; data: { session_id: string } })
        .filter((b) => b.data.session_id === id)
        .map((b) => b.type);
    await expect.poll(() => typesOf().at(-1), { timeout: 20_000 }).toBe("session.terminated");
    // Queued appears only when the session had to wait for a GPU; every other step must be there, in order.
    expect(typesOf().filter((t) => t !== "session.queued")).toEqual([
      "session.created",
      "session.running",
      "session.paused",
      "session.resumed",
      "session.running",
      "session.terminated",
    ]);
    const ids = receiver.received.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);

    // The receiver sees a request before the dispatcher has settled it in the log: wait for the last one.
    const webhookId = created.body.id;
    const attempts = async () =>
      (await bedApi(bed, bed.orgAdmin).call("listWebhookAttempts", { params: { webhookId }, query: { size: 100 } }))
        .data;
    await expect.poll(async () => (await attempts()).length, { timeout: 10_000 }).toBe(ids.length);
    expect((await attempts()).every((a) => a.outcome === "succeeded" && a.status_code === 204)).toBe(true);
    // alice is a member, not an admin: the organization's webhooks are not hers to read.
    expect((await refusalOf(bedApi(bed, bed.alice).call("getWebhook", { params: { webhookId } }))).status).toBe(403);
  });
});
