// System settings (docs/dev/governance.md): branding (public), the sign-up policy and the placement
// policy. super_admins read and change them; a change is merged per group over what is stored (or the
// default), checked whole, written in one transaction and audited with its before and after.
import type { Knex } from "knex";
import { lockSettings, readSettings, writeSetting } from "../../db/operations/settings/systemSettings.ts";
import { Forbidden, Invalid } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { DEFAULT_SETTINGS, SETTING_SCHEMAS, type SettingKey, type SystemSettings } from "./schemas.ts";

interface D {
  db: Knex;
  clock: { now(): Date };
  /** Whether Berth has its own image signing key (docs/dev/images.md): it is trusted besides the listed ones. */
  config?: { images?: { signingKey?: unknown } | undefined };
}

const KEYS = Object.keys(SETTING_SCHEMAS) as SettingKey[];

function merged(rows: { key: string; value: unknown }[]): SystemSettings {
  const out = structuredClone(DEFAULT_SETTINGS) as unknown as Record<string, unknown>;
  for (const r of rows) {
    if (!(r.key in SETTING_SCHEMAS)) continue;
    const schema = SETTING_SCHEMAS[r.key as SettingKey];
    // A stored value from an older shape is read over the default, field by field, and checked.
    const p = schema.safeParse({ ...(out[r.key] as object), ...(r.value as object) });
    if (p.success) out[r.key] = p.data;
  }
  return out as unknown as SystemSettings;
}

export async function readSystemSettings(db: Knex): Promise<SystemSettings> {
  return merged(await readSettings(db, KEYS));
}

export async function getSystemSettings(deps: D, p: Principal): Promise<SystemSettings> {
  if (!p.isSuperAdmin) throw new Forbidden("only a super_admin reads the system settings");
  return readSystemSettings(deps.db);
}

export type SettingsPatch = { [K in SettingKey]?: Partial<SystemSettings[K]> };

/** Applies a partial change; returns before and after (the audit row's diff). */
export async function updateSystemSettings(
  deps: D,
  p: Principal,
  patch: SettingsPatch,
): Promise<{ before: SystemSettings; after: SystemSettings }> {
  if (!p.isSuperAdmin) throw new Forbidden("only a super_admin changes the system settings");
  const keys = KEYS.filter((k) => patch[k] !== undefined);
  return deps.db.transaction(async (tx) => {
    await lockSettings(tx, keys);
    const before = merged(await readSettings(tx, KEYS));
    const after = structuredClone(before);
    const issues = [];
    for (const k of keys) {
      const r = SETTING_SCHEMAS[k].safeParse({ ...before[k], ...patch[k] });
      if (!r.success)
        issues.push(
          ...r.error.issues.map((i) => ({
            path: ["body", k, ...i.path.map(String)],
            message: i.message,
            code: i.code,
          })),
        );
      else (after as unknown as Record<string, unknown>)[k] = r.data;
    }
    // Required signatures with no key to check them against would refuse every session.
    const sig = after.image_signatures;
    if (patch.image_signatures && sig.required && sig.keys.length === 0 && !deps.config?.images?.signingKey)
      issues.push({
        path: ["body", "image_signatures", "keys"],
        message:
          "signatures are required but no key would be trusted: add a key (Berth's own is not configured, BERTH_IMAGE_SIGNING_KEY_FILE)",
        code: "no_trusted_key",
      });
    if (issues.length > 0) throw new Invalid("the settings are invalid", issues);
    if (patch.signup?.organization_id) {
      const org = await tx("organizations").where({ id: patch.signup.organization_id }).first();
      if (!org)
        throw new Invalid("the settings are invalid", [
          { path: ["body", "signup", "organization_id"], message: "no such organization", code: "not_found" },
        ]);
    }
    const at = deps.clock.now();
    for (const k of keys) await writeSetting(tx, k, after[k], p.userId, at);
    return { before, after };
  });
}
