// A MIG layout's instances per card as an administrator types them ("3g.40gb=1, 1g.10gb=2"), and back.
// Only the text's shape is checked here; which profiles a model has and what fits one card the API says
// (mig_profile_unknown, mig_profile_not_for_model, mig_layout_overfilled), with the allowed names.

export type ParsedProfiles = { ok: true; profiles: Record<string, number> } | { ok: false; message: string };

const ENTRY = /^([0-9]g\.[0-9]+gb)\s*[=:×x]\s*([0-9]+)$/i;

export function parseMigProfiles(text: string): ParsedProfiles {
  const entries = text
    .split(/[,;\n]/)
    .map((s) => s.trim())
    .filter((s) => s !== "");
  if (entries.length === 0) return { ok: false, message: "Name at least one profile, as 3g.40gb=1." };
  const profiles: Record<string, number> = {};
  for (const e of entries) {
    const m = ENTRY.exec(e);
    if (!m) return { ok: false, message: `“${e}” is not profile=instances, as 3g.40gb=1.` };
    const name = (m[1] as string).toLowerCase();
    const n = Number(m[2]);
    if (n < 1 || n > 7) return { ok: false, message: `${name}: one card holds 1 to 7 instances of a profile.` };
    if (Object.hasOwn(profiles, name)) return { ok: false, message: `${name} is named twice.` };
    profiles[name] = n;
  }
  return { ok: true, profiles };
}

/** "3g.40gb × 1, 1g.10gb × 2", largest profile first. */
export function formatMigProfiles(profiles: Readonly<Record<string, number>>): string {
  const slices = (p: string) => Number(p.split("g.")[0]);
  return Object.entries(profiles)
    .sort(([a], [b]) => slices(b) - slices(a) || a.localeCompare(b))
    .map(([p, n]) => `${p} × ${n}`)
    .join(", ");
}
