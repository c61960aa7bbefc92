// biome-ignore-all lint/suspicious/noExplicitAny: the apiserver's JSON as it comes
// docs/deploy.md's "Upgrade" run on the bed's real node (issue #33, item 4): the previous landed version
// (release.ts, BERTH_UPGRADE_FROM) installed with its own image and manifests, two researcher's sessions
// running and metered on it, then this checkout's image and manifests applied over it as a rolling update
// while a member's console keeps reading the API and holds the session event stream. Nothing is lost: the
// sessions keep their pods, every usage interval is charged once, no request is answered 5xx, the worker's
// leadership moves; a session paused after the upgrade is charged exactly. Then the previous version is
// applied again (a rollback) and what it keeps is shown; what it cannot undo is in docs/deploy.md.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BED_REGISTRY, ENVIRONMENTS, type Environment } from "@berth/cdk8s/environments";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiAs } from "../api-client.ts";
import { canRunRealNode } from "../testbed/real-node/index.ts";
import { eventually } from "../testbed/waiting.test-support.ts";
import { query } from "./backup.ts";
import { applyRelease, BED_NODE, type BedInstall, installOnTheBed, NOTHING_LEFT, stopInstall } from "./bed.ts";
import { headRelease, migrationsSince, type Release, releaseAt, releaseKnown, upgradeFrom } from "./release.ts";
import {
  aResearcherWithCredits,
  BED_PRESET,
  chargeFor,
  offerTerminal,
  type Researcher,
  sessionCharges,
} from "./researcher.ts";
import { allRolledOut } from "./rollout.ts";
import { followEvents, handOvers, longestGap, requestLoop, watchLease, watchReady } from "./watch.ts";

const FROM = upgradeFrom();
const node = canRunRealNode();
const known = releaseKnown(FROM);
const can = node.ok ? known : node;
/** Migrations between the two versions: a rollback across one is refused by the previous version's API. */
const crossing = known.ok ? migrationsSince(FROM) : [];
const NS = "berth-system";
const bed = ENVIRONMENTS.bed as Environment;
/**
 * A request sent this long before Postgres was seen going down counts as sent while it was: its pod is read
 * every 200 ms, and the database stops at once on SIGTERM while the pod is still Ready for a probe's period.
 */
const POSTGRES_SLACK_MS = 6_000;
/**
 * After Postgres is back, a request may still take a pooled connection to the server that was killed
 * (one the old pod's smart shutdown never closed): it fails once, at the latest after the API's query
 * timeout (BERTH_DATABASE_QUERY_TIMEOUT_SECONDS, 30 s). Seen 9 s after Postgres was Ready.
 */
const STALE_CONNECTION_MS = 30_000;

interface Live {
  id: string;
  cr: string;
  rate: bigint;
  podUid: string;
}

/** Usage intervals of one session: seconds missing between them and seconds metered twice (overlaps). */
interface Intervals {
  samples: number;
  pods: string[];
  lostSeconds: number;
  duplicatedSeconds: number;
}

describe.skipIf(!can.ok)(
  `an upgrade of bed:install from ${FROM} to this checkout with live sessions${can.ok ? "" : ` (skipped: ${can.reason})`}`,
  () => {
    let install: BedInstall;
    let work: string;
    let previous: Release;
    let head: Release;
    let headImage: Promise<string>;
    let r: Researcher;
    /** `a` is paused after the upgrade; `b` runs through the upgrade and the rollback. */
    const live: Record<"a" | "b", Live> = {} as any;
    const lines: string[] = [];
    const figure = (line: string) => {
      lines.push(line);
      console.log(line);
    };
    const target = () => ({ kubeconfig: install.kubeconfigPath });
    const podOf = (s: Live) => install.kube.json<any>("GET", `/api/v1/namespaces/berth-sessions/pods/${s.cr}`);
    const migrations = async () => (await query(target(), "SELECT name FROM knex_migrations ORDER BY id")).flat();

    const intervals = async (s: Live): Promise<Intervals> => {
      const rows = await query(
        target(),
        `SELECT sample_id, extract(epoch FROM period_start), extract(epoch FROM period_end) FROM usage_samples
         WHERE session IN ('${s.id}', '${s.cr}') ORDER BY period_start, period_end`,
      );
      let lost = 0;
      let twice = 0;
      rows.forEach(([, start], i) => {
        if (i === 0) return;
        const end = Number((rows[i - 1] as string[])[2]);
        if (Number(start) > end) lost += Number(start) - end;
        if (Number(start) < end) twice += end - Number(start);
      });
      return {
        samples: rows.length,
        pods: [...new Set(rows.map(([id]) => (id as string).split(":")[0] as string))],
        lostSeconds: lost,
        duplicatedSeconds: twice,
      };
    };
    /** The session's charge once billing caught up: its metered GPU-seconds at its rate, to the unit. */
    const settledCharge = (s: Live, what: string) =>
      eventually(
        async () => {
          const usage = await r.member.call("getSessionUsage", { params: { sessionId: s.id } });
          if (!usage.totals || usage.totals.samples === 0) return undefined;
          const charged = (await sessionCharges(r, s.id)).reduce((n, l) => n - BigInt(l.amount), 0n);
          return charged === chargeFor(s.rate, usage.totals.gpu_seconds) ? { usage, charged } : undefined;
        },
        { what, timeoutMs: 240_000, intervalMs: 2000 },
      );
    const startSession = async (): Promise<Live> => {
      const created = await r.member.call("createSession", {
        body: { offering: "l4", preset: BED_PRESET, image: terminalName },
      });
      const running = await eventually(
        async () => {
          const s = await r.member.call("getSession", { params: { sessionId: created.id } });
          return ["Running", "Failed"].includes(s.phase) ? s : undefined;
        },
        { what: "the session Running", timeoutMs: 240_000, intervalMs: 1000 },
      );
      expect(running.phase, `${running.reason}: ${running.message}`).toBe("Running");
      const s = {
        id: created.id,
        cr: running.resource_name,
        rate: BigInt(running.hourly_credit_rate),
        podUid: "",
      };
      const pod = await podOf(s);
      expect(pod.spec.nodeName).toBe(BED_NODE);
      s.podUid = pod.metadata.uid;
      return s;
    };
    let terminalName: string;

    /** The images Berth's own pods run (Ready ones), by app. */
    const berthImages = async () => {
      const pods = await install.kube.json<any>(
        "GET",
        `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent("app.kubernetes.io/part-of=berth")}`,
      );
      const out: Record<string, string[]> = {};
      for (const p of pods.items) {
        if (p.metadata.deletionTimestamp) continue;
        const app = p.metadata.labels["app.kubernetes.io/name"];
        const image = p.spec.containers[0].image as string;
        if (!image.startsWith(`${BED_REGISTRY}/berth:`)) continue;
        out[app] = [...(out[app] ?? []), image].sort();
      }
      return out;
    };

    /**
     * `release` applied while a member reads the API every 200 ms and holds the event stream, and the
     * worker's Lease is watched; returns once every Deployment and StatefulSet has rolled out and a worker of
     * `release` leads, or once `settled` resolves when given.
     */
    const roll = async (release: Release, o: { image?: Promise<string>; settled?: () => Promise<void> } = {}) => {
      const image = o.image;
      const member = () => r.member;
      const b = live.b;
      const traffic = requestLoop(
        member,
        {
          getMe: (api, signal) => api.call("getMe", {}, { signal }),
          listSessions: (api, signal) => api.call("listSessions", {}, { signal }),
          getSession: (api, signal) => api.call("getSession", { params: { sessionId: b.id } }, { signal }),
        },
        { everyMs: 200, timeoutMs: 10_000 },
      );
      const stream = followEvents(member, { idleMs: 45_000 });
      const lease = watchLease(install.kube, {
        namespace: NS,
        lease: "berth-worker",
        podSelector: "app.kubernetes.io/name=berth-worker",
        everyMs: 200,
      });
      const postgres = watchReady(install.kube, { namespace: NS, pod: "berth-postgres-0", everyMs: 200 });
      try {
        await eventually(async () => (stream.connected.length > 0 ? true : undefined), {
          what: "the event stream open",
          timeoutMs: 30_000,
          intervalMs: 200,
        });
        const started = Date.now();
        await applyRelease(install, release, { ...(image ? { image } : {}), log: (l) => lines.push(l) });
        const applied = Date.now();
        if (o.settled) {
          await o.settled();
          const done = Date.now();
          return { started, applied, done, led: undefined, traffic, stream, lease, postgres };
        }
        await allRolledOut(install, bed, 600_000);
        const done = Date.now();
        // The roll ends with a worker of the new version leading: the last old leader releases the Lease
        // as it stops, and a new replica takes it once it has its database (Postgres may be restarting).
        await eventually(
          async () => {
            const holder = lease.holders.at(-1)?.holder;
            if (!holder) return undefined;
            const pod = await install.kube.raw<any>("GET", `/api/v1/namespaces/${NS}/pods/${holder}`);
            return pod.status === 200 &&
              !pod.body.metadata.deletionTimestamp &&
              pod.body.spec.containers[0].image === `${BED_REGISTRY}/berth:${release.tag}`
              ? true
              : undefined;
          },
          { what: `a worker of ${release.name} holding the Lease`, timeoutMs: 180_000, intervalMs: 500 },
        );
        return { started, applied, done, led: Date.now() as number | undefined, traffic, stream, lease, postgres };
      } finally {
        await Promise.all([traffic.stop(), stream.stop(), lease.stop(), postgres.stop()]);
      }
    };
    type Rolled = Awaited<ReturnType<typeof roll>>;
    /**
     * Failures beyond the documented window (docs/deploy.md "Upgrade"): the bed's in-cluster Postgres is one
     * replica, and a new version that changes its pod restarts it; while it is down the API answers 503
     * `unavailable`, to be retried. Every other 5xx, and any 503 outside that window, is beyond it.
     */
    const beyondDrain = (x: Rolled) =>
      x.traffic.failures.filter(
        (f) =>
          f.status >= 500 &&
          !(
            f.status === 503 &&
            f.code === "unavailable" &&
            x.postgres.down.some(
              (d) => f.at >= d.from - POSTGRES_SLACK_MS && f.at <= (d.to ?? x.done) + STALE_CONNECTION_MS,
            )
          ),
      );
    const report = (what: string, x: Rolled) => {
      const moves = handOvers(x.lease);
      const fiveXx = x.traffic.failures.filter((f) => f.status >= 500);
      figure(
        `${what}: ${((x.done - x.started) / 1000).toFixed(1)} s from apply to ${x.led === undefined ? "what it waited for" : "every pod rolled out"} (image pushed and applied in ${((x.applied - x.started) / 1000).toFixed(1)} s)${x.led === undefined ? "" : `, a new worker leading at ${((x.led - x.started) / 1000).toFixed(1)} s`}`,
      );
      figure(
        `${what}: ${x.traffic.sent} requests, ${x.traffic.failures.length} failed (${fiveXx.length} answered 5xx, ${x.traffic.failures.length - fiveXx.length} without an answer)${x.traffic.failures
          .map(
            (f) =>
              `\n  +${((f.at - x.started) / 1000).toFixed(1)} s ${f.operation} ${f.status} ${f.code ?? ""} ${f.message}`,
          )
          .join("")}`,
      );
      figure(
        `${what}: event stream ${x.stream.connected.length} connections, ${x.stream.ended.length} ended (${x.stream.ended
          .map((e) => e.why)
          .join(
            "; ",
          )}), longest gap between messages ${(longestGap(x.stream, x.started, x.done) / 1000).toFixed(1)} s (heartbeats every 15 s)`,
      );
      figure(
        `${what}: Postgres down ${x.postgres.down.length ? x.postgres.down.map((d) => `${(((d.to ?? x.done) - d.from) / 1000).toFixed(1)} s from +${((d.from - x.started) / 1000).toFixed(1)} s`).join(", ") : "never"}`,
      );
      figure(
        `${what}: worker leadership moved ${moves.length} time(s)${moves.map((m) => `\n  ${m.from} -> ${m.to} in ${(m.ms / 1000).toFixed(1)} s`).join("")}; holders seen: ${x.lease.holders.map((h) => h.holder || "(released)").join(", ")}`,
      );
      return { moves, beyond: beyondDrain(x) };
    };

    beforeAll(async () => {
      work = mkdtempSync(join(tmpdir(), "berth-upgrade-"));
      previous = releaseAt(FROM);
      head = headRelease(bed);
      const t0 = performance.now();
      const previousImage = previous.buildImage(join(work, "previous-oci"), (l) => lines.push(l));
      await previousImage;
      figure(`previous version ${previous.name}: image ready in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      // This checkout's image builds while the previous version installs.
      headImage = head.buildImage(join(work, "head-oci"), (l) => lines.push(l));
      headImage.catch(() => {});
      // 600 s a wait: on this 2-core machine, shared and loaded, the worker took longer than the default 300.
      install = await installOnTheBed({ release: previous, log: (l) => lines.push(l), timeoutMs: 600_000 });
      figure(`install of ${previous.name}: ${install.timings.total?.toFixed(1)} s`);
    }, 1_500_000);

    afterAll(async () => {
      const left = await stopInstall(install);
      if (work) rmSync(work, { recursive: true, force: true });
      if (left) expect(left).toEqual(NOTHING_LEFT);
    }, 300_000);

    it("runs the previous version's pods from its own image, and two sessions of a member charged on it", async () => {
      const images = await berthImages();
      for (const app of ["berth-api", "berth-worker", "berth-operator", "berth-gateway"])
        for (const image of images[app] ?? ["none"]) expect(image, app).toBe(`${BED_REGISTRY}/berth:${previous.tag}`);
      // Berth's own pods ask 1.4 of the node's 2 CPUs, and a rolling update adds a pod per Deployment
      // beside the old ones: at 250m each, two sessions left the new gateway pod unschedulable
      // (Insufficient cpu) and the roll stuck. An idle terminal needs far less.
      terminalName = (await offerTerminal(install, { cpu: "50m" })).name;
      r = await aResearcherWithCredits(install, {
        organization: "Upgrade Lab",
        email: "upgrade@bed.example",
        credits: "1000000000",
      });
      live.a = await startSession();
      live.b = await startSession();
      for (const s of [live.a, live.b])
        expect((await settledCharge(s, "the first interval charged")).charged).toBeGreaterThan(0n);
    }, 900_000);

    let upgrade: Rolled;
    let migrationsBefore: string[];
    let migrationsAfter: string[];
    it("rolls forward to this checkout's image and manifests while a member reads: no 5xx, the worker's leadership moves", async () => {
      migrationsBefore = await migrations();
      upgrade = await roll(head, { image: headImage });
      const { moves, beyond } = report("upgrade", upgrade);
      migrationsAfter = await migrations();
      const applied = migrationsAfter.filter((m) => !migrationsBefore.includes(m));
      figure(
        `upgrade: ${applied.length} migration(s) applied by the new API (${applied.join(", ") || "none between these versions"}); ${migrationsAfter.length} recorded`,
      );
      expect(migrationsAfter.slice(0, migrationsBefore.length)).toEqual(migrationsBefore);
      expect(applied).toEqual(crossing);

      const images = await berthImages();
      for (const app of ["berth-api", "berth-worker", "berth-operator", "berth-gateway"])
        for (const image of images[app] ?? ["none"]) expect(image, app).toBe(`${BED_REGISTRY}/berth:${head.tag}`);
      expect(beyond).toEqual([]);
      expect(moves.length).toBeGreaterThanOrEqual(1);
      const lease = await install.kube.json<any>(
        "GET",
        `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/berth-worker`,
      );
      const workers = await install.kube.json<any>(
        "GET",
        `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent("app.kubernetes.io/name=berth-worker")}`,
      );
      const leader = workers.items.find((p: any) => p.metadata.name === lease.spec.holderIdentity);
      expect(leader?.spec.containers[0].image).toBe(`${BED_REGISTRY}/berth:${head.tag}`);
    }, 1_200_000);

    it("keeps both sessions Running in the same pods, each usage interval metered once", async () => {
      for (const s of [live.a, live.b]) {
        const got = await r.member.call("getSession", { params: { sessionId: s.id } });
        expect(got.phase).toBe("Running");
        const pod = await podOf(s);
        expect(pod.metadata.uid).toBe(s.podUid);
        expect(pod.status.containerStatuses[0].restartCount).toBe(0);
      }
      // The new operator meters each pod again from its start with the same sample ids (docs/dev/billing.md):
      // intervals the old one sent are dropped as sent; an interval metered after the roll is awaited.
      const since = upgrade.done / 1000;
      for (const s of [live.a, live.b]) {
        await eventually(
          async () => {
            const rows = await query(
              target(),
              `SELECT count(*) FROM usage_samples WHERE session IN ('${s.id}', '${s.cr}') AND extract(epoch FROM period_end) > ${since}`,
            );
            return Number(rows[0]?.[0]) > 0 ? true : undefined;
          },
          { what: "an interval metered by the new operator", timeoutMs: 300_000, intervalMs: 2000 },
        );
        const i = await intervals(s);
        figure(
          `upgrade, session ${s.id}: ${i.samples} samples, pods ${i.pods.join(" ")}, ${i.lostSeconds} s lost, ${i.duplicatedSeconds} s metered twice`,
        );
        expect(i.pods).toEqual([s.podUid]);
        expect(i.lostSeconds).toBe(0);
        expect(i.duplicatedSeconds).toBe(0);
        await settledCharge(s, "the charge equal to the metered seconds after the upgrade");
      }
      const sessionPods = await install.kube.json<any>("GET", "/api/v1/namespaces/berth-sessions/pods");
      expect(sessionPods.items.map((p: any) => p.metadata.uid).sort()).toEqual([live.a.podUid, live.b.podUid].sort());
    }, 900_000);

    it("pauses a session on the new version and charges its metered seconds exactly", async () => {
      const s = live.a;
      await r.member.call("pauseSession", { params: { sessionId: s.id } });
      await eventually(
        async () =>
          (await r.member.call("getSession", { params: { sessionId: s.id } })).phase === "Paused" ? true : undefined,
        { what: "the session Paused", timeoutMs: 120_000, intervalMs: 1000 },
      );
      await eventually(
        async () =>
          (await install.kube.raw("GET", `/api/v1/namespaces/berth-sessions/pods/${s.cr}`)).status === 404
            ? true
            : undefined,
        { what: "the session's pod gone", timeoutMs: 120_000, intervalMs: 1000 },
      );
      const { usage, charged } = await settledCharge(s, "the paused session's charge");
      const i = await intervals(s);
      expect(i.lostSeconds).toBe(0);
      expect(i.duplicatedSeconds).toBe(0);
      expect(charged).toBeGreaterThan(0n);
      figure(
        `paused after the upgrade: ${usage.totals.gpu_seconds} GPU-s over ${usage.totals.samples} samples, charged ${charged} at ${s.rate}/h`,
      );
    }, 600_000);

    it.skipIf(crossing.length > 0)(
      "rolls back to the previous version: it keeps the running session, its pod and its charges, the data and the schema",
      async () => {
        const rollback = await roll(previous);
        const { beyond } = report("rollback", rollback);
        const images = await berthImages();
        for (const app of ["berth-api", "berth-worker", "berth-operator", "berth-gateway"])
          for (const image of images[app] ?? ["none"]) expect(image, app).toBe(`${BED_REGISTRY}/berth:${previous.tag}`);
        expect(beyond).toEqual([]);
        // Migrations are forward-only: the schema stays the new version's (docs/deploy.md, "Roll back").
        expect(await migrations()).toEqual(migrationsAfter);

        // The member signs in again; the paused session stays paused with its charge; the running one keeps its pod.
        const login = await apiAs(install.apiUrl, "").call("login", { body: { email: r.email, password: r.password } });
        expect(login.access_token).toBeTruthy();
        expect((await r.member.call("getSession", { params: { sessionId: live.a.id } })).phase).toBe("Paused");
        const b = live.b;
        expect((await r.member.call("getSession", { params: { sessionId: b.id } })).phase).toBe("Running");
        const pod = await podOf(b);
        expect(pod.metadata.uid).toBe(b.podUid);
        expect(pod.status.containerStatuses[0].restartCount).toBe(0);
        const since = rollback.done / 1000;
        await eventually(
          async () => {
            const rows = await query(
              target(),
              `SELECT count(*) FROM usage_samples WHERE session IN ('${b.id}', '${b.cr}') AND extract(epoch FROM period_end) > ${since}`,
            );
            return Number(rows[0]?.[0]) > 0 ? true : undefined;
          },
          {
            what: "an interval metered by the previous version's operator again",
            timeoutMs: 300_000,
            intervalMs: 2000,
          },
        );

        // Paused on the previous version: charged exactly, every interval once across both rolls.
        await r.member.call("pauseSession", { params: { sessionId: b.id } });
        await eventually(
          async () =>
            (await r.member.call("getSession", { params: { sessionId: b.id } })).phase === "Paused" ? true : undefined,
          { what: "the session Paused", timeoutMs: 120_000, intervalMs: 1000 },
        );
        const { usage, charged } = await settledCharge(b, "the charge after the rollback");
        const i = await intervals(b);
        figure(
          `rollback, session ${b.id}: ${i.samples} samples, pods ${i.pods.join(" ")}, ${i.lostSeconds} s lost, ${i.duplicatedSeconds} s metered twice; paused: ${usage.totals.gpu_seconds} GPU-s charged ${charged} at ${b.rate}/h`,
        );
        expect(i.pods).toEqual([b.podUid]);
        expect(i.lostSeconds).toBe(0);
        expect(i.duplicatedSeconds).toBe(0);
      },
      1_200_000,
    );

    it.runIf(crossing.length > 0)(
      "refuses a rollback across a migration: the previous API never serves, this version's keeps serving; applied again, it charges exactly",
      async () => {
        const previousApi = async () => {
          const pods = await install.kube.json<any>(
            "GET",
            `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent("app.kubernetes.io/name=berth-api")}`,
          );
          return pods.items.filter(
            (p: any) => p.spec.containers[0].image === `${BED_REGISTRY}/berth:${previous.tag}`,
          ) as any[];
        };
        let refusal = "";
        const rollback = await roll(previous, {
          // The previous API's new pod exits on the database and says why (its own words, or knex's in a
          // version before api/src/db/knex.ts named them); the rolling update stops there.
          settled: async () => {
            refusal = await eventually(
              async () => {
                for (const p of await previousApi()) {
                  const cs = p.status.containerStatuses?.[0];
                  if (!cs || (cs.restartCount === 0 && !cs.state?.terminated)) continue;
                  const logs = await install.kube.raw(
                    "GET",
                    `/api/v1/namespaces/${NS}/pods/${p.metadata.name}/log${cs.restartCount > 0 ? "?previous=true" : ""}`,
                  );
                  const line = logs.text
                    .split("\n")
                    .find((l) => /migrated by a later version of Berth|migration directory is corrupt/.test(l));
                  if (line) return `${p.metadata.name}: ${line.slice(0, 400)}`;
                }
                return undefined;
              },
              { what: "the previous API refusing the migrated database", timeoutMs: 600_000, intervalMs: 2000 },
            );
          },
        });
        const { beyond } = report("rollback across a migration", rollback);
        figure(`rollback across a migration: refused by ${refusal}`);
        expect(beyond).toEqual([]);
        expect(await migrations()).toEqual(migrationsAfter);
        // No pod of the previous API is Ready; both of this version's still are (maxUnavailable: 0).
        const api = await install.kube.json<any>(
          "GET",
          `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent("app.kubernetes.io/name=berth-api")}`,
        );
        const ready = (p: any) =>
          (p.status.conditions ?? []).some((c: any) => c.type === "Ready" && c.status === "True");
        const readyImages = api.items
          .filter((p: any) => !p.metadata.deletionTimestamp && ready(p))
          .map((p: any) => p.spec.containers[0].image);
        expect(readyImages).toEqual([`${BED_REGISTRY}/berth:${head.tag}`, `${BED_REGISTRY}/berth:${head.tag}`]);

        // docs/deploy.md: across a migration, apply the newer version again.
        const again = await roll(head, { image: headImage });
        const second = report("applied again", again);
        expect(second.beyond).toEqual([]);
        const images = await berthImages();
        for (const app of ["berth-api", "berth-worker", "berth-operator", "berth-gateway"])
          for (const image of images[app] ?? ["none"]) expect(image, app).toBe(`${BED_REGISTRY}/berth:${head.tag}`);
        const login = await apiAs(install.apiUrl, "").call("login", { body: { email: r.email, password: r.password } });
        expect(login.access_token).toBeTruthy();
        expect((await r.member.call("getSession", { params: { sessionId: live.a.id } })).phase).toBe("Paused");
        const b = live.b;
        const pod = await podOf(b);
        expect(pod.metadata.uid).toBe(b.podUid);
        expect(pod.status.containerStatuses[0].restartCount).toBe(0);
        await r.member.call("pauseSession", { params: { sessionId: b.id } });
        await eventually(
          async () =>
            (await r.member.call("getSession", { params: { sessionId: b.id } })).phase === "Paused" ? true : undefined,
          { what: "the session Paused", timeoutMs: 120_000, intervalMs: 1000 },
        );
        const { usage, charged } = await settledCharge(b, "the charge after the rollback was refused");
        const i = await intervals(b);
        figure(
          `applied again, session ${b.id}: ${i.samples} samples, pods ${i.pods.join(" ")}, ${i.lostSeconds} s lost, ${i.duplicatedSeconds} s metered twice; paused: ${usage.totals.gpu_seconds} GPU-s charged ${charged} at ${b.rate}/h`,
        );
        expect(i.pods).toEqual([b.podUid]);
        expect(i.lostSeconds).toBe(0);
        expect(i.duplicatedSeconds).toBe(0);
      },
      1_800_000,
    );
  },
);
