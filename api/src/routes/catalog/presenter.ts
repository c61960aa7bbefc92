// Catalog objects on the wire. Every field is picked by name: nothing of metadata (uids, managed
// fields, resource versions) or status leaks out by accident.
import {
  fractionLabel,
  type ImageSpec,
  migProfileOf,
  migShare,
  type OfferingSpec,
  type ResourcePolicySpec,
  type ResourcePresetSpec,
  sliceOf,
} from "@berth/crds";
import type { KubeObject } from "../../domain/catalog/store.ts";
import type { Image, Offering, ResourcePolicy, ResourcePreset } from "./schemas.ts";

const created = (o: KubeObject) => o.metadata.creationTimestamp ?? null;

/** The apiserver names every object it returns. */
function nameOf(o: KubeObject): string {
  if (o.metadata.name === undefined) throw new Error(`a ${o.kind} without a name`);
  return o.metadata.name;
}

/** The share of a card one session of the offering holds, as a fraction ("1", "1/8", "3/7"). */
function cardShareOf(s: OfferingSpec): string {
  const profile = s.migProfile ? migProfileOf(s.gpuModel, s.migProfile) : undefined;
  if (profile) {
    const share = migShare(profile);
    return share.num === share.den ? "1" : `${share.num}/${share.den}`;
  }
  return s.slicesPerCard ? fractionLabel(s.slicesPerCard) : String(s.gpuCount ?? 1);
}

export function presentOffering(o: KubeObject): Offering {
  const s = o.spec as OfferingSpec;
  const slice =
    s.slicesPerCard !== undefined && s.gpuMemoryMib !== undefined
      ? sliceOf(s.gpuMemoryMib, s.slicesPerCard)
      : undefined;
  return {
    name: nameOf(o),
    display_name: s.displayName,
    gpu_model: s.gpuModel,
    tier: s.tier,
    gpu_count: s.gpuCount ?? 1,
    fraction: fractionLabel(s.slicesPerCard),
    gpu_memory_mib: s.gpuMemoryMib ?? null,
    mig_profile: s.migProfile ?? null,
    card_share: cardShareOf(s),
    slice_memory_mib: slice?.memoryMib ?? null,
    slice_cores: slice?.cores ?? null,
    hourly_credit_rate: s.hourlyCreditRate,
    borrowed_rate_multiplier: (s.borrowedRatePermille ?? 1000) / 1000,
    description: s.description ?? null,
    enabled: s.enabled !== false,
    created_at: created(o),
  };
}

export function presentPreset(o: KubeObject): ResourcePreset {
  const s = o.spec as ResourcePresetSpec;
  return {
    name: nameOf(o),
    display_name: s.displayName,
    kind: s.kind,
    cpu: s.cpu,
    memory: s.memory,
    gpu_count: s.gpuCount ?? 0,
    created_at: created(o),
  };
}

export function presentImage(o: KubeObject): Image {
  const s = o.spec as ImageSpec;
  return {
    name: nameOf(o),
    display_name: s.displayName,
    image: s.image,
    kind: s.kind,
    visibility: s.visibility ?? "public",
    owner: s.owner ?? null,
    description: s.description ?? null,
    created_at: created(o),
  };
}

export const LIMITS: [wire: keyof ResourcePolicy["limits"], spec: keyof NonNullable<ResourcePolicySpec["limits"]>][] = [
  ["max_gpus_per_user", "maxGpusPerUser"],
  ["max_gpus_per_project", "maxGpusPerProject"],
  ["max_gpus_per_organization", "maxGpusPerOrganization"],
  ["max_concurrent_sessions_per_user", "maxConcurrentSessionsPerUser"],
  ["max_session_hours", "maxSessionHours"],
  ["max_volume_gb_per_user", "maxVolumeGbPerUser"],
  ["max_volume_gb_per_project", "maxVolumeGbPerProject"],
  ["max_priority", "maxPriority"],
];

export function limitsToSpec(l: ResourcePolicy["limits"]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [wire, spec] of LIMITS) {
    const v = l[wire];
    if (v !== undefined) out[spec] = v;
  }
  return out;
}

const IDLE = [
  ["timeout_minutes", "timeoutMinutes"],
  ["min_timeout_minutes", "minTimeoutMinutes"],
  ["max_timeout_minutes", "maxTimeoutMinutes"],
  ["gpu_utilization_percent", "gpuUtilizationPercent"],
  ["keep_running_max", "keepRunningMax"],
] as const;

export function idleToSpec(i: ResourcePolicy["idle"]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [wire, spec] of IDLE) if (i[wire] !== undefined) out[spec] = i[wire] as number;
  return out;
}

const FAIR = [
  ["weight", "weight"],
  ["reclaim_grace_seconds", "reclaimGraceSeconds"],
  ["min_runtime_seconds", "minRuntimeSeconds"],
  ["usage_half_life_hours", "usageHalfLifeHours"],
] as const;

export function fairShareToSpec(f: ResourcePolicy["fair_share"]): NonNullable<ResourcePolicySpec["fairShare"]> {
  const out: NonNullable<ResourcePolicySpec["fairShare"]> = {};
  for (const [wire, spec] of FAIR) if (f[wire] !== undefined) out[spec] = f[wire] as number;
  if (f.guarantees)
    out.guarantees = f.guarantees.map((g) => ({
      gpuModel: g.gpu_model,
      gpus: g.guaranteed_gpus,
      ...(g.borrowing_limit_gpus !== undefined ? { borrowingLimit: g.borrowing_limit_gpus } : {}),
      ...(g.lending_limit_gpus !== undefined ? { lendingLimit: g.lending_limit_gpus } : {}),
    }));
  return out;
}

function presentFairShare(f: ResourcePolicySpec["fairShare"]): ResourcePolicy["fair_share"] {
  const out: ResourcePolicy["fair_share"] = {};
  for (const [wire, spec] of FAIR) if (typeof f?.[spec] === "number") out[wire] = f[spec];
  if (f?.guarantees)
    out.guarantees = f.guarantees.map((g) => ({
      gpu_model: g.gpuModel,
      guaranteed_gpus: g.gpus,
      ...(g.borrowingLimit !== undefined ? { borrowing_limit_gpus: g.borrowingLimit } : {}),
      ...(g.lendingLimit !== undefined ? { lending_limit_gpus: g.lendingLimit } : {}),
    }));
  return out;
}

export function presentPolicy(o: KubeObject): ResourcePolicy {
  const s = o.spec as ResourcePolicySpec;
  const limits: ResourcePolicy["limits"] = {};
  for (const [wire, spec] of LIMITS) {
    const v = s.limits?.[spec];
    if (typeof v === "number") limits[wire] = v;
  }
  return {
    name: nameOf(o),
    scope: { kind: s.scope.kind, id: s.scope.id ?? null, organization: s.scope.organization ?? null },
    limits,
    idle: Object.fromEntries(
      IDLE.flatMap(([wire, spec]) => (typeof s.idle?.[spec] === "number" ? [[wire, s.idle[spec]]] : [])),
    ),
    fair_share: presentFairShare(s.fairShare),
    allowed_offerings: s.allowedOfferings ?? null,
    created_at: created(o),
  };
}
