// biome-ignore-all lint/suspicious/noExplicitAny: the bench reads the API's JSON and audit events as they come
// Management-cluster writes per volume lifecycle (docs/dev/storage.md), counted by the management
// apiserver itself: its audit log records every create, update, patch and delete it answers (policy:
// Metadata for write verbs, nothing else). Each phase's writes are the audit events that arrived while it
// ran (and a settling second after), by resource and by who wrote. Side by side, the same phases of a
// session that mounts no volume (the baseline): the volume's cost is the difference. Leases (the worker's
// leader election, renewed every few seconds) and Events are counted apart as background.
//
//   node bench/src/storage-volume-writes.ts [--rounds=3] [--idle-ms=5000]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { H100, type SessionsBed, startSessionsBed } from "@berth/e2e/sessions";
import { installBedStorage, startProvisioner } from "@berth/e2e/storage";
import { apiAs } from "./api.ts";

const { values } = parseArgs({
  options: { rounds: { type: "string", default: "3" }, "idle-ms": { type: "string", default: "5000" } },
});
const ROUNDS = Number(values.rounds);
const IDLE_MS = Number(values["idle-ms"]);
const CLASS = "berth-shared";
const SETTLE_MS = 1_000;

const dir = mkdtempSync(join(tmpdir(), "berth-bench-writes-"));
const policy = join(dir, "audit-policy.yaml");
const log = join(dir, "audit.log");
writeFileSync(
  policy,
  [
    "apiVersion: audit.k8s.io/v1",
    "kind: Policy",
    "omitStages: [RequestReceived]",
    "rules:",
    "  - level: Metadata",
    "    verbs: [create, update, patch, delete, deletecollection]",
    "  - level: None",
    "",
  ].join("\n"),
);

interface AuditEvent {
  verb: string;
  stage: string;
  user?: { username?: string };
  objectRef?: { resource?: string; subresource?: string; apiGroup?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
}

let offset = 0;
/** The audit events written since the last call (complete lines only). */
function take(): AuditEvent[] {
  let text: string;
  try {
    text = readFileSync(log, "utf8");
  } catch {
    return [];
  }
  const end = text.lastIndexOf("\n") + 1;
  const chunk = text.slice(offset, end);
  offset = end;
  return chunk
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditEvent)
    .filter((e) => e.stage === "ResponseComplete");
}

interface Count {
  /** Writes the apiserver took (2xx), not leases or events. */
  writes: number;
  /** Writes it refused (conflicts, not found, ...). */
  refused: number;
  background: number;
  by: Map<string, number>;
}

const who = (u: string | undefined) => (u ?? "?").replace(/^system:serviceaccount:[^:]+:/, "");

function count(events: AuditEvent[]): Count {
  const c: Count = { writes: 0, refused: 0, background: 0, by: new Map() };
  for (const e of events) {
    const r = e.objectRef ?? {};
    if (r.apiGroup === "coordination.k8s.io" || r.resource === "events") {
      c.background++;
      continue;
    }
    const ok = (e.responseStatus?.code ?? 0) < 300;
    if (!ok) {
      c.refused++;
      continue;
    }
    c.writes++;
    const key = `${e.verb} ${r.resource}${r.subresource ? `/${r.subresource}` : ""} (${who(e.user?.username)})`;
    c.by.set(key, (c.by.get(key) ?? 0) + 1);
  }
  return c;
}

async function phase(fn: () => Promise<void>): Promise<Count> {
  take();
  await fn();
  await sleep(SETTLE_MS);
  return count(take());
}

async function until(what: string, pred: () => Promise<boolean>, ms = 120_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await pred())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

type Phase =
  | "create volume"
  | "session create → Running"
  | "terminate → Terminated"
  | "claim release"
  | "delete volume";
const PHASES: Phase[] = [
  "create volume",
  "session create → Running",
  "terminate → Terminated",
  "claim release",
  "delete volume",
];

async function lifecycle(bed: SessionsBed, i: number, withVolume: boolean): Promise<Map<Phase, Count>> {
  const out = new Map<Phase, Count>();
  const alice = apiAs(bed.t.api.url, bed.alice);
  let volumeId: string | undefined;
  out.set(
    "create volume",
    await phase(async () => {
      if (!withVolume) return;
      volumeId = (await alice.call("createVolume", { body: { name: `w-${i}`, size_gb: 1 } })).id;
    }),
  );
  let sessionId = "";
  out.set(
    "session create → Running",
    await phase(async () => {
      const s = await alice.call("createSession", {
        body: {
          offering: "h100",
          preset: "gpu-small",
          image: "jupyterlab",
          volumes: volumeId ? [{ volume: volumeId }] : [],
        },
      });
      sessionId = s.id;
      await bed.waitFor(bed.alice, sessionId, (x) => x.phase === "Running", "Running", 120_000);
    }),
  );
  out.set(
    "terminate → Terminated",
    await phase(async () => {
      await alice.call("terminateSession", { params: { sessionId } });
      await bed.waitFor(bed.alice, sessionId, (x) => x.phase === "Terminated", "Terminated", 120_000);
    }),
  );
  out.set(
    "claim release",
    await phase(async () => {
      // Without a volume: the same wait, so both columns cover as long a window.
      if (!volumeId) {
        await sleep(IDLE_MS + 1_000);
        return;
      }
      await until("the claim's release", async () => {
        const v = await alice.call("getVolume", { params: { volumeId: volumeId as string } });
        return v.bound_cluster === null;
      });
    }),
  );
  out.set(
    "delete volume",
    await phase(async () => {
      if (!volumeId) return;
      await alice.call("deleteVolume", { params: { volumeId: volumeId as string } });
    }),
  );
  return out;
}

async function main() {
  const node = (name: string) => ({ name, gpuModel: H100, gpuCount: 8 });
  const bed = await startSessionsBed({
    fleet: {
      clusters: [
        {
          name: "mgmt",
          kind: "management",
          extraArgs: {
            "kube-apiserver": [`--audit-policy-file=${policy}`, `--audit-log-path=${log}`, "--audit-log-mode=blocking"],
          },
        },
        { name: "gpu-a", kind: "gpu", nodes: [node("gpu-a-1")], gpuRuntimeClass: true, gpuDevicePlugin: true },
      ],
    },
    worker: { claimIdleMs: IDLE_MS },
  });
  const a = bed.fleet.cluster("gpu-a");
  await installBedStorage(a, { storageClass: CLASS, capacityGb: 100_000 });
  const provisioner = startProvisioner(a, { storageClass: CLASS, intervalMs: 50 });
  try {
    await apiAs(bed.t.api.url, bed.superAdmin).call("createStoragePool", {
      body: { name: "shared", cluster: bed.gpu["gpu-a"]?.id as string, storage_class: CLASS },
    });
    await sleep(2_000);
    // Background alone: a quiet window as long as a settle.
    const quiet = await phase(async () => {
      await sleep(5_000);
    });

    const runs: { with: Map<Phase, Count>[]; without: Map<Phase, Count>[] } = { with: [], without: [] };
    for (let i = 0; i < ROUNDS; i++) {
      runs.without.push(await lifecycle(bed, i, false));
      runs.with.push(await lifecycle(bed, i, true));
    }
    const mean = (xs: Map<Phase, Count>[], p: Phase, f: (c: Count) => number) =>
      xs.reduce((s, m) => s + f(m.get(p) as Count), 0) / xs.length;
    console.log(
      `Management-cluster writes per phase, mean of ${ROUNDS} rounds (audit log of the management apiserver; leases and events apart)`,
    );
    console.log(
      "phase                        without a volume   with one volume   the volume's cost   refused (w/o, w/)",
    );
    let totalWith = 0;
    let totalWithout = 0;
    for (const p of PHASES) {
      const w = mean(runs.with, p, (c) => c.writes);
      const wo = mean(runs.without, p, (c) => c.writes);
      totalWith += w;
      totalWithout += wo;
      console.log(
        `${p.padEnd(28)} ${wo.toFixed(1).padStart(16)} ${w.toFixed(1).padStart(17)} ${(w - wo).toFixed(1).padStart(19)}   ${mean(runs.without, p, (c) => c.refused).toFixed(1)}, ${mean(runs.with, p, (c) => c.refused).toFixed(1)}`,
      );
    }
    console.log(
      `${"whole lifecycle".padEnd(28)} ${totalWithout.toFixed(1).padStart(16)} ${totalWith.toFixed(1).padStart(17)} ${(totalWith - totalWithout).toFixed(1).padStart(19)}`,
    );
    console.log(
      `background (leases, events) in a quiet 5 s window: ${quiet.background}; other writes then: ${quiet.writes}`,
    );
    console.log("\nWhat the volume's phases wrote in the last round (verb resource (writer): count):");
    const last = runs.with.at(-1) as Map<Phase, Count>;
    const lastWithout = runs.without.at(-1) as Map<Phase, Count>;
    for (const p of PHASES) {
      const mine = last.get(p) as Count;
      const base = lastWithout.get(p) as Count;
      const keys = new Set([...mine.by.keys(), ...base.by.keys()]);
      const lines = [...keys]
        .map((k) => ({ k, w: mine.by.get(k) ?? 0, wo: base.by.get(k) ?? 0 }))
        .filter((x) => x.w !== x.wo)
        .map((x) => `    ${x.k}: ${x.wo} → ${x.w}`);
      console.log(`  ${p}:${lines.length ? `\n${lines.join("\n")}` : " no difference"}`);
    }
  } finally {
    await provisioner.stop();
    await bed.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
