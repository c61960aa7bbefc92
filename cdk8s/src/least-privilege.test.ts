// Which grants does Berth use? The bed's apiservers keep an audit log while a session goes through its
// whole journey (create → Running → pause → resume → terminate, a node drain, usage reports) with the
// least-privilege credentials the rule lists make (the same lists the cdk8s charts are made from). Then:
// - a request any Berth account was refused (403) is a missing rule;
// - a grant no request used, and that no other path is known to need (USED_ELSEWHERE), is a rule to remove.
// The test prints each account's grant count and what the journey left unused.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { apiSessionsRbac, managementRbac, workerRbac } from "@berth/api/rbac";
import type { FleetDescription } from "@berth/e2e";
import { H100, type SessionsBed, startSessionsBed } from "@berth/e2e/sessions";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { controlPlaneRules, operatorRules } from "./gpu-cluster.ts";
import { type AuditedRequest, allows, grantKey, grantsOf, mergeRules, type RuleList } from "./rbac.ts";

vi.setConfig({ testTimeout: 240_000 });

const dir = mkdtempSync(join(tmpdir(), "berth-audit-"));
const policy = join(dir, "policy.yaml");
writeFileSync(
  policy,
  "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n  - level: Metadata\n",
);
const auditArgs = (name: string) => ({
  "kube-apiserver": [`--audit-policy-file=${policy}`, `--audit-log-path=${join(dir, `${name}.log`)}`],
});

const FLEET: FleetDescription = {
  clusters: [
    { name: "mgmt", kind: "management", extraArgs: auditArgs("mgmt") },
    {
      name: "gpu-a",
      kind: "gpu",
      nodes: [
        { name: "gpu-a-1", gpuModel: H100, gpuCount: 2 },
        { name: "gpu-a-2", gpuModel: H100, gpuCount: 2 },
      ],
      gpuRuntimeClass: true,
      gpuDevicePlugin: true,
      extraArgs: auditArgs("gpu-a"),
    },
  ],
};

/** Each account of the bed (sessions harness) and the rule list it was minted from. */
const ACCOUNTS: { user: string; cluster: string; rules: RuleList }[] = [
  {
    user: "system:serviceaccount:berth-system:berth-api",
    cluster: "mgmt",
    rules: mergeRules(managementRbac(), apiSessionsRbac()),
  },
  { user: "system:serviceaccount:berth-system:berth-worker", cluster: "mgmt", rules: mergeRules(workerRbac()) },
  {
    user: "system:serviceaccount:berth-system:berth-operator",
    cluster: "gpu-a",
    rules: operatorRules("berth-system", "berth-sessions"),
  },
  {
    user: "system:serviceaccount:berth-sessions:berth-control-plane",
    cluster: "gpu-a",
    rules: controlPlaneRules("berth-sessions"),
  },
];

/**
 * Grants this journey does not exercise, each with the path that needs it. A grant unused here and not
 * listed is reported as removable and fails the test.
 */
const OP = "system:serviceaccount:berth-system:berth-operator";
const USED_ELSEWHERE: Record<string, string> = {
  [`${OP} get nodes`]: "the mirror controller asks whether a vanished pod's node is gone (nodeAbsent)",
  [`${OP} update sessionmirrors/finalizers.berth.dev in berth-sessions`]:
    "owner references with blockOwnerDeletion where OwnerReferencesPermissionEnforcement is on (not on the bed)",
  [`${OP} update networkpolicies.networking.k8s.io in berth-sessions`]:
    "the sessions policy is rewritten when someone edits it (planSessionsPolicy)",
  [`${OP} delete networkpolicies.networking.k8s.io in berth-sessions`]: "the deleteNetworkPolicy action",
  // Called on every run, but timing decides whether the journey sees it: the policy is read only when the
  // informer has not synced yet; a mirror's status is patched only when it differs from the last report.
  [`${OP} get networkpolicies.networking.k8s.io in berth-sessions`]: "readPolicy before the first list",
  [`${OP} patch sessionmirrors/status.berth.dev in berth-sessions`]: "the mirror status write in reconcile",
  // This journey mounts no volume; the storage journey (e2e/src/storage) makes and reads claims.
  [`${OP} get persistentvolumeclaims in berth-sessions`]: "a session's claim is read until it binds",
  [`${OP} create persistentvolumeclaims in berth-sessions`]: "a session's claim is made where it lands",
  [`${OP} list csistoragecapacities.storage.k8s.io`]: "the volume sync tick reads the driver's capacity",
  [`${OP} get nodes/proxy`]: "the volume sync tick reads the kubelet's stats of nodes whose pods mount a volume",
};

/**
 * Accounts whose unexplained unused grants fail the test. The control plane's accounts (API, worker, and
 * its credential on GPU clusters) serve paths this journey does not take (registration, catalog admin,
 * node deletion, logs); their unused grants are reported, not yet classified.
 */
const STRICT = new Set([OP]);

let bed: SessionsBed;
beforeAll(async () => {
  bed = await startSessionsBed({ fleet: FLEET, operatorUsageIntervalMs: 1_000 });
});
afterAll(async () => {
  await bed?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface AuditEvent {
  stage: string;
  verb: string;
  user: { username: string };
  objectRef?: { apiGroup?: string; resource?: string; subresource?: string; namespace?: string };
  responseStatus?: { code?: number };
  requestURI: string;
}

function audited(cluster: string): AuditEvent[] {
  return readFileSync(join(dir, `${cluster}.log`), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditEvent);
}

const requestOf = (e: AuditEvent): AuditedRequest | undefined =>
  e.objectRef?.resource
    ? {
        verb: e.verb,
        group: e.objectRef.apiGroup ?? "",
        resource: e.objectRef.subresource ? `${e.objectRef.resource}/${e.objectRef.subresource}` : e.objectRef.resource,
        ...(e.objectRef.namespace ? { namespace: e.objectRef.namespace } : {}),
      }
    : undefined;

const h100 = { offering: "h100", preset: "gpu-small", image: "jupyterlab" };

describe("least privilege", () => {
  it("the journey needs every grant Berth's accounts hold, and no request is refused", async () => {
    const started = performance.now();
    const a = (await bed.call(bed.alice, "POST", "/api/v1/sessions", h100)).body.id as string;
    await bed.waitFor(bed.alice, a, (s) => s.phase === "Running", "Running");
    expect((await bed.call(bed.alice, "POST", `/api/v1/sessions/${a}/pause`)).status).toBe(202);
    await bed.waitFor(bed.alice, a, (s) => s.phase === "Paused", "Paused");
    expect((await bed.call(bed.alice, "POST", `/api/v1/sessions/${a}/resume`)).status).toBe(202);
    const running = await bed.waitFor(bed.alice, a, (s) => s.phase === "Running", "Running again");
    // Usage reports: one sample per second per session pod.
    await new Promise((r) => setTimeout(r, 3_000));
    const drained = await bed.call(
      bed.superAdmin,
      "POST",
      `/api/v1/nodes/${bed.gpu["gpu-a"]?.id}/${running.node}/drain`,
    );
    expect(drained.status, JSON.stringify(drained.body)).toBe(200);
    expect(drained.body.evictions, JSON.stringify(drained.body)).toEqual([
      expect.objectContaining({ result: "evicted" }),
    ]);
    // The evicted pod goes; the session starts again on the other node, often before a poll of the
    // session sees it leave Running (and its `message` can lag behind its `node`): watch the pods instead.
    const drainedNode = running.node as string;
    for (let i = 0; ; i++) {
      const pods = await bed.pods("gpu-a");
      if (!pods.some((p) => p.node === drainedNode && !p.deleting)) break;
      if (i > 600) throw new Error(`a session pod stays on the drained node: ${JSON.stringify(pods)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await bed.call(bed.alice, "POST", `/api/v1/sessions/${a}/terminate`)).status).toBe(202);
    await bed.waitFor(bed.alice, a, (s) => s.phase === "Terminated", "Terminated");
    const journeyMs = performance.now() - started;

    const report: string[] = [`journey: ${(journeyMs / 1000).toFixed(1)} s`];
    const refused: string[] = [];
    const removable: string[] = [];
    for (const acct of ACCOUNTS) {
      const events = audited(acct.cluster).filter((e) => e.user.username === acct.user);
      for (const e of events)
        if (e.responseStatus?.code === 403) refused.push(`${acct.user}: ${e.verb} ${e.requestURI}`);
      const requests = events.flatMap((e) => requestOf(e) ?? []);
      const grants = grantsOf(acct.rules);
      const unused = grants.filter((g) => !requests.some((r) => allows(g, r))).map(grantKey);
      const unexplained = unused.filter((k) => !USED_ELSEWHERE[`${acct.user} ${k}`]);
      if (STRICT.has(acct.user)) removable.push(...unexplained.map((k) => `${acct.user} ${k}`));
      report.push(
        `${acct.user}: ${grants.length} grants, ${grants.length - unused.length} used by the journey, ` +
          `${unused.length - unexplained.length} needed elsewhere, ${unexplained.length} unused: ${unexplained.join("; ")}`,
      );
    }
    // BERTH_RBAC_REPORT=<file>: the counts for the record (bench-style figures, not asserted).
    if (process.env.BERTH_RBAC_REPORT) writeFileSync(process.env.BERTH_RBAC_REPORT, `${report.join("\n")}\n`);
    expect(refused, report.join("\n")).toEqual([]);
    expect(removable, report.join("\n")).toEqual([]);
  });
});
