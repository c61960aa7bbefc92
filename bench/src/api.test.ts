// bench/src/api.ts against a real HTTP server that answers as the API would: answers as values, and the
// retries the soak and the scale benches lean on.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answering, causeOf, retrying } from "./api.ts";

const seen: { method: string; url: string; key: string | undefined; auth: string | undefined }[] = [];
/** Answers to come, in order; an empty list answers 201 with a session. */
const script: { status: number; body: unknown }[] = [];
let server: Server;
let url = "";

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    seen.push({
      method: req.method ?? "",
      url: req.url ?? "",
      key: req.headers["idempotency-key"] as string | undefined,
      auth: req.headers.authorization,
    });
    const next = script.shift() ?? { status: 201, body: { id: "ses_1", phase: "Pending" } };
    res.writeHead(next.status, { "content-type": "application/json" }).end(JSON.stringify(next.body));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
});

const envelope = (code: string) => ({ error: { code, message: code, request_id: "req_1" } });
const alice = { token: "t-alice" };
const session = { offering: "h100", preset: "gpu-small", image: "terminal", name: "s" };
/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((r) => closed.close(r));
  return port;
}

describe("answering", () => {
  it("answers a success with its status and body, sending the token, the key and the contract's path", async () => {
    seen.length = 0;
    const a = await answering(() => url)(alice, "createSession", { body: session }, { idempotencyKey: "k1" });
    expect(a).toEqual({ ok: true, status: 201, body: { id: "ses_1", phase: "Pending" } });
    expect(seen).toEqual([{ method: "POST", url: "/api/v1/sessions", key: "k1", auth: "Bearer t-alice" }]);
  });

  it("answers a refusal with its status and the envelope's code, not an exception", async () => {
    script.push({ status: 409, body: envelope("conflict") });
    const a = await answering(() => url)(alice, "terminateSession", { params: { sessionId: "ses_1" } });
    expect(a).toMatchObject({ ok: false, status: 409, code: "conflict" });
    expect(causeOf(a)).toBe("409 conflict");
  });

  it("throws fetch's own failure when nothing answers", async () => {
    const port = await closedPort();
    await expect(answering(() => `http://127.0.0.1:${port}`)(alice, "listSessions")).rejects.toMatchObject({
      cause: { code: "ECONNREFUSED" },
    });
  });
});

describe("retrying", () => {
  const busy = (a: { status: number } | undefined) => !a || a.status === 503;

  it("sends a keyed create again through 503s, with the same key, until it is answered", async () => {
    seen.length = 0;
    script.push({ status: 503, body: envelope("unavailable") }, { status: 503, body: envelope("unavailable") });
    const call = retrying(
      answering(() => url),
      { attempts: 5, backoffMs: () => 1, again: (_op, a) => busy(a) },
    );
    const a = await call(alice, "createSession", { body: session }, { idempotencyKey: "k2" });
    expect(causeOf(a)).toBe("201");
    expect(seen.map((s) => s.key)).toEqual(["k2", "k2", "k2"]);
  });

  it("gives up after its attempts with the last answer, and answers no answer at all as status 0", async () => {
    script.push({ status: 503, body: envelope("unavailable") }, { status: 503, body: envelope("unavailable") });
    const twice = {
      attempts: 2,
      backoffMs: () => 1,
      again: (_op: unknown, a: { status: number } | undefined) => busy(a),
    };
    expect(
      causeOf(
        await retrying(
          answering(() => url),
          twice,
        )(alice, "listSessions"),
      ),
    ).toBe("503 unavailable");

    const port = await closedPort();
    const told: string[] = [];
    const nowhere = retrying(
      answering(() => `http://127.0.0.1:${port}`),
      {
        ...twice,
        noAnswer: (op, why, n) => told.push(`${op} ${why} ${n}`),
      },
    );
    expect(await nowhere(alice, "listSessions")).toMatchObject({ ok: false, status: 0, code: "no_answer" });
    expect(told).toEqual(["listSessions ECONNREFUSED 2"]);
  });
});
