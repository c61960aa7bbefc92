import { describe, expect, it } from "vitest";
import type { ProbeResult } from "./probe.ts";
import { refusalOf } from "./register.ts";

const probe = (
  status: ProbeResult["status"],
  checks: Partial<ProbeResult["checks"]>,
  findings: ProbeResult["findings"] = {},
): ProbeResult => ({
  status,
  checks: {
    reachable: true,
    gpu_runtime_class: true,
    gpu_device_plugin: true,
    credential_permissions: true,
    ...checks,
  },
  probedAt: "2026-11-22T12:00:00.000Z",
  durationMs: 12,
  findings,
});

describe("a probe's verdict on a registration", () => {
  it("accepts a connected cluster", () => {
    expect(refusalOf(probe("connected", {}))).toBeUndefined();
  });

  it.each([
    [
      "cluster_unreachable",
      probe(
        "unreachable",
        { reachable: false, gpu_runtime_class: false, gpu_device_plugin: false, credential_permissions: false },
        { error: { reason: "TIMEOUT", message: "no answer" } },
      ),
    ],
    [
      "cluster_credential_invalid",
      probe("unauthorized", { gpu_runtime_class: false, gpu_device_plugin: false, credential_permissions: false }),
    ],
    // Without the permissions the other checks cannot see: insufficient comes first.
    [
      "cluster_credential_insufficient",
      probe(
        "degraded",
        { credential_permissions: false, gpu_runtime_class: false },
        { missingPermissions: ["get runtimeclasses.node.k8s.io (cluster-wide)"] },
      ),
    ],
    ["gpu_runtime_class_missing", probe("degraded", { gpu_runtime_class: false, gpu_device_plugin: false })],
    ["gpu_device_plugin_missing", probe("degraded", { gpu_device_plugin: false })],
  ])("refuses with %s, details carrying every check", (code, p) => {
    const r = refusalOf(p);
    expect(r?.code).toBe(code);
    expect(r?.status).toBe(422);
    expect(r?.details.checks).toEqual(p.checks);
  });
});
