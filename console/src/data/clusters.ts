// The probe's checks as people read them: what each one means, and what to do when it failed. Used by
// the registration result, the connection test and the cluster page.
import type { ClusterChecks } from "../api/openapi.gen.ts";

export interface CheckLine {
  key: keyof ClusterChecks;
  label: string;
  ok: boolean | undefined;
  /** Why it matters / how to fix it; shown when the check failed. */
  fix: string;
}

const CHECKS: { key: keyof ClusterChecks; label: string; fix: string }[] = [
  {
    key: "reachable",
    label: "API server reachable",
    fix: "The control plane got no answer from the cluster's API server. Check the server address, that it is reachable from the control plane's network, and the CA certificate.",
  },
  {
    key: "credential_permissions",
    label: "Credential has the permissions Berth uses",
    fix: "The credential was refused or lacks verbs Berth needs. Bind its service account to Berth's cluster role and register again.",
  },
  {
    key: "gpu_runtime_class",
    label: "GPU runtime class (nvidia)",
    fix: "No RuntimeClass for GPU containers was found. Install the NVIDIA container toolkit and create the nvidia RuntimeClass.",
  },
  {
    key: "gpu_device_plugin",
    label: "GPU device plugin",
    fix: "No NVIDIA device plugin DaemonSet in kube-system and no node offers nvidia.com/gpu. Install the device plugin (with GPU sharing) and wait for nodes to report GPUs.",
  },
];

/** Every check in a stable order; a check the answer does not carry is "not run" (undefined). */
export function checkLines(checks: Partial<ClusterChecks> | undefined): CheckLine[] {
  return CHECKS.map((c) => ({ ...c, ok: checks?.[c.key] }));
}

/** details.checks of a refused registration (422), when the answer carries them. */
export function checksFromDetails(details: Record<string, unknown>): Partial<ClusterChecks> | undefined {
  const c = details.checks;
  if (!c || typeof c !== "object") return undefined;
  const out: Partial<ClusterChecks> = {};
  for (const k of CHECKS.map((x) => x.key)) {
    const v = (c as Record<string, unknown>)[k];
    if (typeof v === "boolean") out[k] = v;
  }
  return out;
}

export type ClusterStatus = "connected" | "unreachable" | "unauthorized" | "degraded" | "unknown" | "deregistered";

export function statusTone(s: ClusterStatus): "ok" | "warn" | "bad" | "muted" {
  switch (s) {
    case "connected":
      return "ok";
    case "degraded":
      return "warn";
    case "unreachable":
    case "unauthorized":
      return "bad";
    default:
      return "muted";
  }
}
