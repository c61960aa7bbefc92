// Storage's fleet-wide settings (super_admin changes them; anyone signed in reads them, the console shows
// the rate): the storage rate per GB-hour, the fleet-default capacity a pool without a stated or
// reported figure uses (capacity rule 1: meant for single-pool installs), and how long a deleted volume's
// data is kept for its owner to undo the delete.
import { z } from "zod";
import { readStorageSettings, writeStorageSettings } from "../../db/operations/volumes/storageSettings.ts";
import type { Deps } from "../../deps.ts";
import { Forbidden, Invalid } from "../../errors.ts";
import { DEFAULT_STORAGE_RATE } from "../credits/storage.ts";
import type { Principal } from "../identity/principal.ts";

export const StorageSettings = z
  .object({
    gb_hour_credit_rate: z
      .string()
      .regex(/^(0|[1-9][0-9]{0,18})$/, "minor units per GB-hour as a string of digits (1 credit = 1,000,000)"),
    fleet_capacity_gb: z.number().int().min(1).max(1_073_741_824).nullable(),
    delete_grace_hours: z.number().int().min(0).max(720),
  })
  .strict();
export type StorageSettings = z.infer<typeof StorageSettings>;

export const DEFAULT_STORAGE_SETTINGS: StorageSettings = {
  gb_hour_credit_rate: DEFAULT_STORAGE_RATE.toString(),
  fleet_capacity_gb: null,
  delete_grace_hours: 24,
};

export async function storageSettings(db: Deps["db"]): Promise<StorageSettings> {
  const stored = await readStorageSettings(db);
  const r = StorageSettings.safeParse({ ...DEFAULT_STORAGE_SETTINGS, ...stored });
  return r.success ? r.data : DEFAULT_STORAGE_SETTINGS;
}

export async function updateStorageSettings(
  deps: Pick<Deps, "db" | "clock">,
  p: Principal,
  patch: Partial<StorageSettings>,
): Promise<{ before: StorageSettings; after: StorageSettings }> {
  if (!p.isSuperAdmin) throw new Forbidden("only a super_admin changes the storage settings");
  return deps.db.transaction(async (tx) => {
    await tx.raw("SELECT pg_advisory_xact_lock(hashtext('settings/storage'))");
    const before = await storageSettings(tx);
    const r = StorageSettings.safeParse({ ...before, ...patch });
    if (!r.success)
      throw new Invalid(
        "the storage settings are invalid",
        r.error.issues.map((i) => ({ path: ["body", ...i.path.map(String)], message: i.message, code: i.code })),
      );
    await writeStorageSettings(tx, r.data, p.userId, deps.clock.now());
    return { before, after: r.data };
  });
}
