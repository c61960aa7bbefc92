// Postgres stopped and started again under streams and reads (the soak's `pg-stop`, docs/dev/soak.md): once
// it is back, the API and the worker answer as before. The soak saw every create of the next burst refused
// or unanswered after a Postgres restart; this is that sequence at its smallest, on the fault bed's real
// processes and its real Postgres.

import { H100, MANAGEMENT } from "@berth/e2e/sessions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answering, type Caller, causeOf } from "./api.ts";
import { type FaultBed, sleep, startFaultBed } from "./fault-bed.ts";

const h100 = { offering: "h100", preset: "gpu-small", image: "terminal" };

describe("Postgres stopped and started again", () => {
  let f: FaultBed;
  let call: Caller;
  let running = true;
  const loops: Promise<void>[] = [];

  beforeAll(async () => {
    f = await startFaultBed({
      fleet: {
        clusters: [
          MANAGEMENT,
          {
            name: "gpu-a",
            kind: "gpu",
            nodes: [1, 2].map((i) => ({ name: `gpu-a-${i}`, gpuModel: H100, gpuCount: 8 })),
            gpuRuntimeClass: true,
            gpuDevicePlugin: true,
          },
        ],
      },
      gpuCluster: "gpu-a",
      usageIntervalMs: 10_000,
    });
    const b = f.bed;
    call = answering(() => f.split.apiUrl, 60_000);
    await f.split.reissueTokens([b.superAdmin, b.orgAdmin, b.alice, b.bob]);
    const policy = await call(b.superAdmin, "updateResourcePolicy", {
      params: { name: "global" },
      body: { limits: {} },
    });
    expect(policy.status, JSON.stringify(policy)).toBe(200);
  }, 600_000);

  afterAll(async () => {
    running = false;
    await Promise.allSettled(loops);
    await f?.stop();
  }, 120_000);

  /** A create retried with its key while the API cannot answer (503, no answer), until `deadline`. */
  const create = async (token: string, name: string, deadline: number) => {
    const seen: string[] = [];
    for (;;) {
      const r = await call({ token }, "createSession", { body: { ...h100, name } }, { idempotencyKey: name }).catch(
        (e: Error) => ({ ok: false, status: 0, code: "", message: e.message }) as const,
      );
      seen.push(causeOf(r));
      if (r.status === 201 || (r.status > 0 && r.status < 500 && r.status !== 409) || Date.now() > deadline)
        return { ...r, seen };
      await sleep(500);
    }
  };

  it("accepts creates again once it is back, with streams open through the stop", async () => {
    const b = f.bed;
    // Streams held open and reopened after a drop, as the console holds them.
    for (const u of [b.alice, b.bob, b.orgAdmin, b.alice, b.bob, b.orgAdmin])
      loops.push(
        (async () => {
          while (running) {
            const ac = new AbortController();
            const watch = setInterval(() => !running && ac.abort(), 200);
            try {
              const res = await fetch(`${f.split.apiUrl}/api/v1/sessions/events`, {
                headers: { authorization: `Bearer ${u.token}` },
                signal: ac.signal,
              });
              for await (const _ of res.body ?? []) if (!running) break;
            } catch {
              // dropped: reopen
            } finally {
              clearInterval(watch);
            }
            if (running) await sleep(200);
          }
        })(),
      );
    const before = await create(b.alice.token, "pg-before", Date.now() + 120_000);
    expect(before.status, before.seen.join(", ")).toBe(201);

    await f.stopPostgres();
    await sleep(5000); // the fault's length, as the soak's
    await f.startPostgresAgain();

    // A few creates at once, each retried while the API says it cannot reach the database.
    const deadline = Date.now() + 180_000;
    const after = await Promise.all(
      [b.alice, b.bob, b.orgAdmin, b.alice, b.bob, b.orgAdmin].map((u, i) =>
        create(u.token, `pg-after-${i}`, deadline),
      ),
    );
    expect(
      after.map((r) => r.status),
      `${after.map((r, i) => `pg-after-${i}: ${r.seen.join(", ")}`).join("\n")}\napi:\n${f.split.api.tail.join("\n")}`,
    ).toEqual(after.map(() => 201));
  }, 600_000);
});
