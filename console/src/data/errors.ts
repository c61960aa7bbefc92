// What to do about an API error, by its stable code (the contract: "clients map it to a message").
// The envelope's own message is always shown first; these lines add the next step.
import type { ApiError } from "../api/client.ts";
import { outOfBoundsText } from "./reclaim.ts";

type Advice = (e: ApiError) => string[];

const ADVICE: Partial<Record<ApiError["code"], Advice>> = {
  network_error: () => ["The console could not reach the API. It will keep trying; check the network or try again."],
  token_expired: () => ["Your sign-in expired. Sign in again; the console brings you back here."],
  unauthenticated: () => ["Sign in again to continue."],
  invalid_credentials: () => ["Check the email and password. After several failures sign-in pauses for a while."],
  too_many_requests: () => ["Too many attempts. Wait a few minutes before trying again."],
  password_change_required: () => ["Change your password first."],
  forbidden: () => ["Your role does not allow this. Ask an administrator of your organization."],
  quota_exceeded: (e) => [
    ...describeQuota(e.details),
    "Pause or terminate a running session, pick a smaller offering, or ask an administrator for more credits or quota.",
  ],
  volume_on_another_cluster: (e) => {
    const d = (e.details ?? {}) as {
      release_after?: string | null;
      releasing?: boolean;
      idle_release_seconds?: number | null;
    };
    const when = d.releasing
      ? "Its claim is being released now: try again in a moment."
      : d.release_after
        ? `Its claim is released at ${new Date(d.release_after).toLocaleString()} unless a session mounts it first.`
        : typeof d.idle_release_seconds === "number"
          ? `Its claim is released ${Math.round(d.idle_release_seconds / 60)} minutes after its last session ends.`
          : undefined;
    return [
      "The session's volume lives on another cluster. Remove the cluster pin, or pin it to the volume's cluster.",
      ...(when ? [when] : []),
    ];
  },
  cluster_in_use: () => ["Terminate the sessions and remove the allocations on this cluster first."],
  cluster_unreachable: () => [
    "The control plane could not reach the cluster's API server. Check the server address and that the control plane's network can reach it.",
  ],
  cluster_credential_invalid: () => ["The credential was refused by the cluster. Check the token or kubeconfig."],
  cluster_credential_insufficient: () => [
    "The credential works but lacks permissions Berth needs. Bind it to the role from Berth's install docs.",
  ],
  gpu_runtime_class_missing: () => [
    "Install the NVIDIA container runtime and its RuntimeClass on the cluster, then register again.",
  ],
  gpu_device_plugin_missing: () => [
    "Install the NVIDIA device plugin (GPU sharing) on the cluster, then register again.",
  ],
  validation_failed: (e) => issuesOf(e.details),
  idle_timeout_out_of_bounds: (e) => [
    outOfBoundsText(e.details) ?? "Choose an idle timeout within your policy's bounds.",
  ],
  max_runtime_out_of_bounds: (e) => [
    outOfBoundsText(e.details) ?? "Choose a maximum running time within your policy's ceiling.",
  ],
  idempotency_key_reused: () => [
    "This looks like a different request sent with an earlier key. Start over from the form.",
  ],
  unavailable: () => ["A service the API depends on is unavailable. Try again in a minute."],
  internal: () => ["This is a bug in Berth. Quote the request id to your administrator."],
};

function issuesOf(details: Record<string, unknown>): string[] {
  const issues = details.issues;
  if (!Array.isArray(issues)) return [];
  return issues.map((i: { path?: unknown[]; message?: string }) => {
    const path = Array.isArray(i.path)
      ? i.path.filter((p) => p !== "body" && p !== "query" && p !== "params").join(".")
      : "";
    return path ? `${path}: ${i.message ?? "invalid"}` : (i.message ?? "invalid");
  });
}

function describeQuota(details: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(details)) {
    if (k === "issues") continue;
    if (v === null || typeof v === "object") continue;
    out.push(`${k.replaceAll("_", " ")}: ${String(v)}`);
  }
  const models = details.reported_models;
  if (Array.isArray(models) && models.length) out.push(`GPU models the fleet offers: ${models.join(", ")}`);
  return out;
}

export function adviceFor(e: ApiError): string[] {
  const extra: string[] = [];
  const models = e.details.reported_models;
  if (e.code !== "quota_exceeded" && Array.isArray(models)) {
    extra.push(
      models.length
        ? `GPU models the fleet offers: ${models.join(", ")}`
        : "No cluster in the fleet reports any GPU model right now.",
    );
  }
  return [...(ADVICE[e.code]?.(e) ?? []), ...extra];
}
