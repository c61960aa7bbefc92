// What a session would cost, and whether the caller could create it now. Rates are charging's
// (domain/credits/money.ts): the offering's hourly rate × the session's GPUs ÷ the offering's GPUs, exact until
// the cost of a duration is rounded up to a whole unit (as the door rounds its minimum run). Amounts are
// integer minor units (1 credit = 1,000,000) as strings; never a float.
//
// `canStart` asks what creating the session would check, in its order — the offering is enabled, the
// fleet has its GPU model, the resource policy, then billing's door — with the same functions, but
// reading only: no lock, no write. A refusal is what create would answer (its code, message, details).
// Two previews can both say yes where only one create passes: the gate decides under its locks.
import {
  type CapacityClass,
  fractionLabel,
  gpuOccupancy,
  MINOR_UNITS_PER_CREDIT,
  organizationNamespace,
  volumeIdOf,
} from "@berth/crds";
import type { Deps } from "../../deps.ts";
import { DomainError, Invalid } from "../../errors.ts";
import { atPermille, costOf, sessionRate, units } from "../credits/money.ts";
import { storageCostOf, storageRate } from "../credits/storage.ts";
import type { Principal } from "../identity/principal.ts";
import { migOfOffering, migRefusal } from "../mig/offered.ts";
import { fairShareSetting, ratePermilleOf } from "./capacityClass.ts";
import { quotaRefusal } from "./checkQuota.ts";
import { checkVolumes } from "./checkVolumes.ts";
import { gpuAvailability } from "./gpuAvailability.ts";
import { gpuModelRefusal, gpuSharingRefusal, sliceOfOffering } from "./gpuRefusals.ts";
import { resolveOwnership } from "./ownership.ts";
import { sessionsRuntimeOf } from "./runtime.ts";

export interface CostPreviewInput {
  offering: string;
  preset?: string;
  duration_seconds: number;
  organization_id?: string;
  project_id?: string;
  volumes?: string[];
  capacity_class?: CapacityClass;
}

export interface CostPreview {
  offering: string;
  gpuModel: string;
  gpuCount: number;
  hourlyRate: string;
  durationSeconds: number;
  cost: string;
  gpuAvailableNow: boolean;
  /** The organization and project the session would belong to (null when that cannot be told). */
  organizationId: string | null;
  projectId: string | null;
  canStart: boolean;
  refusal?: DomainError;
  /** Which rate applies (docs/dev/fair-share.md) and the share of the full rate it is. */
  capacityClass: CapacityClass;
  rateMultiplier: number;
  fullHourlyRate: string;
  /** For a borrowed session: the warning and protection it would run under. */
  reclaimTerms: { graceSeconds: number; minRuntimeSeconds: number } | null;
  /** The named volumes' storage (billed while they exist, running or not): minor units as strings. */
  storage: {
    volumes: { volume: string; sizeGb: number }[];
    sizeGb: number;
    gbHourRate: string;
    hourlyRate: string;
    cost: string;
  };
}

export function credits(minor: bigint): string {
  const whole = minor / MINOR_UNITS_PER_CREDIT;
  const frac = (minor % MINOR_UNITS_PER_CREDIT).toString().padStart(6, "0").replace(/0+$/, "");
  return frac ? `${whole}.${frac}` : whole.toString();
}

export async function previewCost(deps: Deps, principal: Principal, input: CostPreviewInput): Promise<CostPreview> {
  const { catalog } = sessionsRuntimeOf(deps);
  const [offering, preset] = await Promise.all([
    catalog.offering(input.offering),
    input.preset ? catalog.preset(input.preset) : Promise.resolve(undefined),
  ]);
  const issues = [
    ...(!offering ? [{ path: ["body", "offering"], message: "no such offering", code: "invalid_reference" }] : []),
    ...(input.preset && !preset
      ? [{ path: ["body", "preset"], message: "no such preset", code: "invalid_reference" }]
      : []),
  ];
  if (!offering || issues.length > 0) throw new Invalid("the request is invalid", issues);
  // A named organization or project that is not the caller's is a bad input (400, as on create); an
  // organization that cannot be told (none or several, none named) is a refusal: the price still holds.
  const named = input.organization_id !== undefined || input.project_id !== undefined;
  const ownership = named
    ? await resolveOwnership(deps, principal, input)
    : await resolveOwnership(deps, principal, input).catch((e: unknown) => {
        if (e instanceof Invalid) return e;
        throw e;
      });

  const slice = sliceOfOffering(offering);
  const mig = migOfOffering(offering);
  const gpuCount =
    slice || mig ? 1 : preset && preset.spec.gpuCount > 0 ? preset.spec.gpuCount : offering.spec.gpuCount;
  const capacityClass = input.capacity_class ?? "guaranteed";
  const fullRate = sessionRate(units(offering.spec.hourlyCreditRate), offering.spec.gpuCount, gpuCount);
  const permille = ratePermilleOf(capacityClass, offering);
  const rate = atPermille(fullRate, permille);
  const avail = await gpuAvailability(deps, principal);

  let refusal: DomainError | undefined;
  if (ownership instanceof Invalid) refusal = ownership;
  else if (!offering.spec.enabled)
    refusal = new Invalid("the request is invalid", [
      { path: ["body", "offering"], message: "this offering is disabled", code: "invalid_reference" },
    ]);
  else
    refusal = mig
      ? await migRefusal(deps, input.offering, offering.spec.gpuModel, mig.profile)
      : ((await gpuModelRefusal(deps, input.offering, offering.spec.gpuModel)) ??
        (slice
          ? await gpuSharingRefusal(deps, input.offering, offering.spec.gpuModel, slice.slicesPerCard)
          : undefined));
  if (!refusal && !(ownership instanceof Invalid))
    refusal = await quotaRefusal(deps, deps.db, principal, {
      kind: "create",
      ownerId: principal.userId,
      organizationId: ownership.organizationId,
      projectId: ownership.projectId,
      offering,
      gpuCount,
      gpuOccupancy: gpuOccupancy(gpuCount, slice?.slicesPerCard, mig?.share),
      capacityClass,
    });
  const policies = await sessionsRuntimeOf(deps).catalog.policies();
  const site = ownership instanceof Invalid ? undefined : ownership;

  // The volumes, checked as create checks them (who may mount them; a locked one is create's refusal).
  const storage = { volumes: [] as { volume: string; sizeGb: number }[], sizeGb: 0 };
  if (input.volumes?.length && !(ownership instanceof Invalid)) {
    const namespace = organizationNamespace(ownership.organizationId);
    const mounts = await checkVolumes(deps, principal, namespace, {
      volumes: input.volumes.map((volume) => ({ volume })),
    }).catch((e: unknown) => {
      if (e instanceof Invalid || !(e instanceof DomainError)) throw e;
      refusal ??= e;
      return [];
    });
    for (const m of mounts) {
      const vol = await sessionsRuntimeOf(deps).catalog.volume(namespace, m.volume);
      if (vol) storage.volumes.push({ volume: volumeIdOf(m.volume), sizeGb: vol.spec.sizeGb });
    }
    storage.sizeGb = storage.volumes.reduce((a, v) => a + v.sizeGb, 0);
  }
  const gbHour = await storageRate(deps.db);

  return {
    offering: input.offering,
    gpuModel: offering.spec.gpuModel,
    gpuCount,
    hourlyRate: costOf(rate, 3600).toString(),
    durationSeconds: input.duration_seconds,
    cost: costOf(rate, input.duration_seconds).toString(),
    gpuAvailableNow: avail.clusters.some((c) =>
      c.gpuModel !== offering.spec.gpuModel
        ? false
        : mig
          ? (c.migFree[mig.profile] ?? 0) > 0
          : slice
            ? (c.slicesFree[fractionLabel(slice.slicesPerCard)] ?? 0) > 0
            : c.wholeFree >= gpuCount && c.largestNode >= gpuCount,
    ),
    organizationId: ownership instanceof Invalid ? null : ownership.organizationId,
    projectId: ownership instanceof Invalid ? null : ownership.projectId,
    canStart: refusal === undefined,
    ...(refusal ? { refusal } : {}),
    capacityClass,
    rateMultiplier: permille / 1000,
    fullHourlyRate: costOf(fullRate, 3600).toString(),
    reclaimTerms:
      capacityClass === "borrowed"
        ? {
            graceSeconds: fairShareSetting(
              policies,
              site ?? { organizationId: "", projectId: null },
              "reclaimGraceSeconds",
            ),
            minRuntimeSeconds: fairShareSetting(
              policies,
              site ?? { organizationId: "", projectId: null },
              "minRuntimeSeconds",
            ),
          }
        : null,
    storage: {
      ...storage,
      gbHourRate: gbHour.toString(),
      hourlyRate: storageCostOf(gbHour, storage.sizeGb, 3600).toString(),
      cost: storageCostOf(gbHour, storage.sizeGb, input.duration_seconds).toString(),
    },
  };
}
