// Torture: 50 concurrent writers deliver 10,000 usage samples (a fifth of the deliveries are duplicates:
// whole batches sent again) to a real API child process, which is killed with SIGKILL at random moments
// and restarted; writers retry what got no answer, as operators do. Afterwards (and after the worker's
// sweep for what a killed process left unbilled): every sample stored once and charged once, every
// session charged exactly its usage at its rate (to the unit), the organization's wallets down by
// exactly that, and the ledger's invariants hold.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { quietPorts } from "@berth/e2e";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../db/db.test-support.ts";
import { OperatorTokens } from "../clusters/operatorToken.ts";
import { generateSigningKeyPem, signingKeyFromPem } from "../clusters/signingKey.ts";
import { billPendingUsage } from "./charge.ts";
import {
  anOrganizationWallet,
  aSession,
  aWallet,
  CREDIT,
  expectLedgerInvariants,
  grant,
  TEST_OFFERINGS,
  testBilling,
} from "./credits.test-support.ts";

const WRITERS = 50;
const SAMPLES = 10_000;
const BATCH = 10;
const SESSIONS = 10;
const MAX_KILLS = 25;
const OFFERINGS = ["l4", "a100", "h100"];

let tdb: TestDatabase;
let dir: string;

beforeAll(async () => {
  tdb = await createTestDatabase();
  dir = mkdtempSync(join(tmpdir(), "berth-torture-"));
});
afterAll(async () => {
  await tdb?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Deterministic pseudo-random numbers (the failure of one run can be replayed). */
function prng(seed: number) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

describe("charging under a crashing API", () => {
  it("charges each of 10,000 samples once, exactly, with 50 writers, a fifth of deliveries duplicated and the API killed with SIGKILL at random", async () => {
    const db = tdb.db;
    const pem = generateSigningKeyPem();
    const keyFile = join(dir, "key.pem");
    writeFileSync(keyFile, pem, { mode: 0o600 });
    const tokens = new OperatorTokens({ key: await signingKeyFromPem(pem), clock: { now: () => new Date() } });
    const issued = await tokens.issue("clu_torture");
    await db("clusters").insert({
      id: "clu_torture",
      name: "torture",
      session_domain: "torture.test",
      operator_token_jti: issued.jti,
      operator_token_issued_at: issued.issuedAt,
      operator_token_expires_at: issued.expiresAt,
    });

    const org = await anOrganizationWallet(db, 1_000_000n * CREDIT);
    const sessions: { id: string; userWallet: string }[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      const owner = `usr_torture${i}`;
      const user = await aWallet(db, org.id, "user", owner);
      if (i % 2 === 0) await grant(db, user.id, 3n * CREDIT);
      sessions.push({
        ...(await aSession(db, {
          ownerId: owner,
          organizationId: org.id,
          offering: OFFERINGS[i % 3] as string,
          clusterId: "clu_torture",
        })),
        userWallet: user.id,
      });
    }
    const before = (await db("wallets").where({ organization_id: org.id }).sum({ s: "balance" }).first()) as {
      s: string;
    };

    // The samples: 5 to 15 seconds each, in milliseconds.
    const rnd = prng(20261122);
    const t0 = Date.parse("2026-11-22T00:00:00Z");
    const all = Array.from({ length: SAMPLES }, (_, k) => {
      const ms = 5_000 + Math.floor(rnd() * 10_001);
      return {
        id: `t-${k}`,
        session: (sessions[k % SESSIONS] as { id: string }).id,
        start: new Date(t0 + Math.floor(k / SESSIONS) * 20_000).toISOString(),
        ms,
      };
    });
    const batches: (typeof all)[] = [];
    for (let i = 0; i < all.length; i += BATCH) batches.push(all.slice(i, i + BATCH));

    // The API child, killed and restarted at random.
    // One port for all the restarts, so it is picked below the ephemeral range: a port the kernel
    // handed out could be taken by an outgoing connection between a kill and the next start.
    const port = await quietPorts();
    const url = `http://127.0.0.1:${port}`;
    const script = fileURLToPath(new URL("./tortureChild.test-support.ts", import.meta.url));
    let child: ChildProcess | undefined;
    let kills = 0;
    /** Starts the API; resolves once it listens (a loaded machine takes seconds to load it). */
    const startChild = () =>
      new Promise<void>((resolve) => {
        const c = spawn(process.execPath, [script], {
          env: {
            ...process.env,
            BERTH_TORTURE_DB: tdb.url,
            BERTH_TORTURE_KEY: keyFile,
            BERTH_TORTURE_PORT: String(port),
          },
          stdio: ["ignore", "pipe", "inherit"],
        });
        child = c;
        c.stdout?.on("data", (d: Buffer) => {
          if (d.toString().includes("ready")) resolve();
        });
        c.once("exit", () => resolve());
      });
    await startChild();
    let done = false;
    const killer = (async () => {
      const r = prng(7);
      // At most MAX_KILLS, so a loaded machine (seconds per restart) still finishes; then it runs on.
      while (!done && kills < MAX_KILLS) {
        // Killed at a random moment 0.2 to 1.5 s into its life: mid-request, mid-billing, idle.
        await new Promise((res) => setTimeout(res, 200 + r() * 1_300));
        if (done) break;
        const c = child as ChildProcess;
        const exited = new Promise((res) =>
          c.exitCode === null && c.signalCode === null ? c.once("exit", res) : res(undefined),
        );
        c.kill("SIGKILL");
        await exited;
        kills++;
        if (done) break;
        await startChild();
      }
    })();

    // Writers: each takes the next batch; a fifth of deliveries resend an earlier batch whole.
    let next = 0;
    let deliveries = 0;
    let duplicates = 0;
    let retries = 0;
    const post = async (batch: typeof all) => {
      const body = JSON.stringify({
        cluster_id: "clu_torture",
        samples: batch.map((s) => ({
          id: s.id,
          session: s.session,
          start: s.start,
          end: new Date(Date.parse(s.start) + s.ms).toISOString(),
          gpu_seconds: s.ms / 1000,
        })),
      });
      for (;;) {
        try {
          const res = await fetch(`${url}/internal/v1/usage`, {
            method: "POST",
            headers: { authorization: `Bearer ${issued.token}`, "content-type": "application/json" },
            body,
            signal: AbortSignal.timeout(20_000),
          });
          if (res.status === 200) {
            await res.json();
            return;
          }
          await res.text();
        } catch {
          // no answer: the process died under us; the operator sends the same batch again
        }
        retries++;
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    try {
      await Promise.all(
        Array.from({ length: WRITERS }, async (_, w) => {
          const r = prng(1000 + w);
          for (;;) {
            if (next > 0 && r() < 0.2) {
              await post(batches[Math.floor(r() * Math.min(next, batches.length))] as typeof all);
              duplicates++;
              deliveries++;
              continue;
            }
            const i = next++;
            if (i >= batches.length) return;
            await post(batches[i] as typeof all);
            deliveries++;
          }
        }),
      );
    } finally {
      done = true;
      await killer;
      (child as ChildProcess | undefined)?.kill("SIGKILL");
    }

    // The worker's sweep charges what a killed process stored but did not charge.
    const { b } = testBilling(db, { offerings: {} });
    const swept = await billPendingUsage(b);
    // As the worker does, sweep again while rows remain: a killed child's backend can still hold row locks
    // for a moment (SKIP LOCKED then returns a short batch and one pass stops early).
    for (let i = 0; i < 60; i++) {
      const left = await db("usage_samples").where({ cluster_id: "clu_torture" }).whereNull("billed_at").first();
      if (!left) break;
      await new Promise((r) => setTimeout(r, 500));
      await billPendingUsage(b);
    }

    expect(kills).toBeGreaterThanOrEqual(1); // how many fit depends on the machine: a quiet one finishes in ~10 s
    expect(duplicates / deliveries).toBeGreaterThan(0.15);
    const stored = Number(
      ((await db("usage_samples").where({ cluster_id: "clu_torture" }).count({ n: "*" }).first()) as { n: string }).n,
    );
    expect(stored).toBe(SAMPLES);
    const unbilled = Number(
      (
        (await db("usage_samples")
          .where({ cluster_id: "clu_torture" })
          .whereNull("billed_at")
          .count({ n: "*" })
          .first()) as { n: string }
      ).n,
    );
    expect(unbilled).toBe(0);
    const charges = Number(
      (
        (await db("ledger_transactions")
          .where({ kind: "charge", cluster_id: "clu_torture" })
          .count({ n: "*" })
          .first()) as { n: string }
      ).n,
    );
    expect(charges).toBe(SAMPLES);

    // Each session: exactly floor(rate x total ms / 3,600,000), whatever the order and the crashes.
    let expectedTotal = 0n;
    for (const [i, s] of sessions.entries()) {
      const rate = BigInt(
        (TEST_OFFERINGS[OFFERINGS[i % 3] as string] as { hourlyCreditRate: string }).hourlyCreditRate,
      );
      const ms = all.filter((x) => x.session === s.id).reduce((n, x) => n + BigInt(x.ms), 0n);
      const expected = (rate * ms) / 3_600_000n;
      expectedTotal += expected;
      const got = (await db("ledger_transactions")
        .where({ kind: "charge", session_id: s.id })
        .sum({ s: "amount" })
        .first()) as { s: string };
      expect(BigInt(got.s), `session ${i}`).toBe(expected);
    }
    const after = (await db("wallets").where({ organization_id: org.id }).sum({ s: "balance" }).first()) as {
      s: string;
    };
    expect(BigInt(before.s) - BigInt(after.s)).toBe(expectedTotal);
    await expectLedgerInvariants(db);
    process.stdout.write(
      `torture: ${deliveries} deliveries (${duplicates} duplicates), ${retries} retries, ${kills} SIGKILLs, ${swept.samples} samples left unbilled by killed processes and charged by the sweep, ${SAMPLES} samples charged once, ${expectedTotal} units\n`,
    );
  }, 1_200_000);
});
