// biome-ignore-all lint/suspicious/noExplicitAny: journeys read the API's JSON as it comes
// Journey on the whole fleet: Alice's session runs on her organization's credits; as its usage is
// charged she is warned (notification, `session.credits_low` on her stream), then the session is paused
// when the credits cannot cover its next minute (pod gone, GPU back, `session.credits_exhausted`).
// Resuming is refused with quota_exceeded until her organization's admin tops the wallet up; then it
// runs again. The Wallet resource in the management cluster shows the ledger's balance.
// Minutes of usage are posted as the GPU cluster's operator would (same route, same operator token), so
// the journey need not run for ten minutes; the real operator meters the pod too (hourly intervals here,
// and the last partial one at the pause), and every figure below counts both.
import { readFileSync } from "node:fs";
import { resourcePath, WalletKind } from "@berth/crds";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { answered, bedApi, refusalOf } from "../api-client.ts";
import { adminKube, openEventStream, type SessionsBed, startSessionsBed } from "../sessions/harness.ts";
import { until } from "../until.ts";

vi.setConfig({ testTimeout: 240_000 });

let bed: SessionsBed;
beforeAll(async () => {
  bed = await startSessionsBed({ operatorUsageIntervalMs: 3_600_000 });
});
afterAll(async () => {
  await bed?.stop();
});

const h100 = { offering: "h100", preset: "gpu-small", image: "jupyterlab" };
// h100: 4 credits/h = 1,111.1 units per second; ten minutes = 666,667 units, a minute 66,667.
const TEN_MINUTES = 666_667n;

/** The session's stored samples (ms), what was charged for them, and the cost of their time rounded down. */
async function billed(id: string) {
  const db = bed.t.database.db;
  const samples = await db("usage_samples").where({ session: id }).select("period_start", "period_end", "billed_at");
  const ms = samples.reduce(
    (n: bigint, r: any) => n + BigInt(new Date(r.period_end).getTime() - new Date(r.period_start).getTime()),
    0n,
  );
  const charged = (await db("ledger_transactions")
    .where({ kind: "charge", session_id: id })
    .sum({ s: "amount" })
    .first()) as { s: string | null };
  return {
    allBilled: samples.every((r: any) => r.billed_at !== null),
    charged: BigInt(charged.s ?? "0"),
    cost: (4_000_000n * ms) / 3_600_000n,
  };
}

describe("running out of credits", () => {
  it("warns, pauses the session when the credits run out, and lets it resume after a top-up", async () => {
    const { t, alice, orgAdmin } = bed;
    const admin = bedApi(bed, orgAdmin);
    const [orgWallet] = (
      await admin.call("listWallets", { query: { organization: bed.org.id, owner_kind: "organization" } })
    ).data;
    if (!orgWallet) throw new Error("the organization has no wallet");
    // The admin sets most of the organization's credits aside in a project wallet: what is left covers
    // ten minutes of one H100 and a little more.
    const project = await t.aProject(bed.org.id, "Reserve");
    const reserve = await admin.call("openWallet", {
      body: { organization_id: bed.org.id, owner_kind: "project", owner_id: project.id },
    });
    const keep = TEN_MINUTES + 100n;
    const moved = await answered(bed, orgAdmin, (api) =>
      api.call("allocateCredits", {
        body: {
          from_wallet_id: orgWallet.id,
          to_wallet_id: reserve.id,
          amount: (BigInt(orgWallet.balance) - keep).toString(),
          reason: "set aside",
        },
      }),
    );
    expect(moved.status).toBe(201);

    const stream = await openEventStream(`${t.api.url}/api/v1/sessions/events`, alice.token);
    try {
      const created = await answered(bed, alice, (api) => api.call("createSession", { body: h100 }));
      expect(created.status).toBe(201);
      const id = created.body.id;
      const running = await bed.waitFor(alice, id, (s) => s.phase === "Running", "Running", 120_000);
      const cluster = Object.values(bed.gpu).find((g) => g.id === running.cluster_id) as (typeof bed.gpu)[string];
      const token = readFileSync(cluster.tokenFile, "utf8").trim();
      const report = async (sampleId: string, startSec: number, seconds: number) => {
        const start = Date.parse("2026-11-22T10:00:00Z") + startSec * 1000;
        const res = await fetch(`${bed.plane.url}/internal/v1/usage`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({
            cluster_id: cluster.id,
            samples: [
              {
                id: sampleId,
                session: id,
                start: new Date(start).toISOString(),
                end: new Date(start + seconds * 1000).toISOString(),
                gpu_seconds: seconds,
              },
            ],
          }),
        });
        expect(res.status).toBe(200);
        await res.json();
      };

      // One minute of usage: what is left no longer covers ten minutes.
      await report("oc-1", 0, 60);
      const low = await stream.waitFor(
        (e) => e.event === "session.credits_low" && e.data.session_id === id,
        "credits_low",
        60_000,
      );
      expect(low.data.credits).toMatchObject({ limit: "credits", seconds: 600 });
      // 66,666.7 charged for the minute: the 0.7 is carried, not rounded up (plus the pod's own samples, if any).
      await until("the wallet to show what was charged", async () => {
        const b = await billed(id);
        const wallet = await admin.call("getWallet", { params: { walletId: orgWallet.id } });
        return b.allBilled && b.charged === b.cost && BigInt(wallet.balance) === keep - b.charged;
      });

      // Eight and a half more minutes, sent twice (an operator's retry): charged once; the next minute
      // is no longer covered, and the session is paused.
      await report("oc-2", 60, 510);
      await report("oc-2", 60, 510);
      const exhausted = await stream.waitFor(
        (e) => e.event === "session.credits_exhausted" && e.data.session_id === id,
        "credits_exhausted",
        60_000,
      );
      expect(exhausted.data.credits.limit).toBe("credits");
      const paused = await bed.waitFor(alice, id, (s) => s.phase === "Paused", "Paused", 120_000);
      expect(paused.reason).toBe("InsufficientCredits");
      await until(
        "the pod to go",
        async () => !(await bed.pods(cluster.name)).some((p) => p.name === running.resource_name && !p.deleting),
      );
      // Charged: the 570 s posted and the pod's own last interval up to the pause, once each, to the unit.
      const done = await until("every sample to be billed", async () => {
        const b = await billed(id);
        return b.allBilled ? b : undefined;
      });
      expect(done.charged).toBe(done.cost);
      expect(done.charged).toBeGreaterThanOrEqual((4_000_000n * 570n) / 3600n);
      const notes = (await t.database.db("notifications").where({ user_id: alice.id }).orderBy("id")).map(
        (n: any) => n.kind,
      );
      expect(notes).toEqual(["credits.running_low", "session.paused"]);

      // Resuming is refused until credits come back; the top-up lets it run again.
      const refused = await refusalOf(bedApi(bed, alice).call("resumeSession", { params: { sessionId: id } }));
      expect(refused.status).toBe(403);
      expect(refused).toMatchObject({
        code: "quota_exceeded",
        details: { limit: "credits", required: TEN_MINUTES.toString() },
      });
      const topUp = await answered(bed, orgAdmin, (api) =>
        api.call("allocateCredits", {
          body: { from_wallet_id: reserve.id, to_wallet_id: orgWallet.id, amount: "10000000", reason: "top-up" },
        }),
      );
      expect(topUp.status).toBe(201);
      const resumed = await answered(bed, alice, (api) => api.call("resumeSession", { params: { sessionId: id } }));
      expect(resumed.status).toBe(202);
      await bed.waitFor(alice, id, (s) => s.phase === "Running", "Running again", 120_000);

      // The Wallet resource mirrors the ledger (written by the worker on change).
      const mgmt = adminKube(bed.fleet.cluster("mgmt"));
      try {
        let w: any;
        const cr = await until("the Wallet resource to catch up", async () => {
          w = await t.database.db("wallets").where({ id: orgWallet.id }).first();
          const res = await mgmt.raw("GET", resourcePath(WalletKind, { namespace: w.cr_namespace, name: w.cr_name }));
          const body = res.body as any;
          return res.status === 200 && body.status?.balance === w.balance ? body : false;
        });
        expect(cr.spec.owner).toEqual({ kind: "organization", id: bed.org.id });
        expect(cr.status.lastAppliedSequence).toBe(Number(w.last_sequence));
      } finally {
        mgmt.close();
      }
    } finally {
      await stream.close();
    }
  });
});
