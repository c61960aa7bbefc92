// The catalog administration page's forms as data: per kind, its fields, how an object fills the form,
// and how the form becomes the create (POST) or change (PATCH) body. Pure, so the rules are tested
// without a browser; the API still checks everything and its refusals name the fields.
import { formatCredits, parseCredits, unitsToInput } from "./credits.ts";
import { LIMIT_LABEL } from "./quotas.ts";

export type CatalogTab = "offerings" | "presets" | "images" | "policies" | "build-clusters";
export const CATALOG_TABS: { tab: CatalogTab; label: string }[] = [
  { tab: "offerings", label: "Offerings" },
  { tab: "presets", label: "Presets" },
  { tab: "images", label: "Images" },
  { tab: "policies", label: "Resource policies" },
  { tab: "build-clusters", label: "Build clusters" },
];
export const catalogTab = (q: URLSearchParams): CatalogTab =>
  CATALOG_TABS.find((t) => t.tab === q.get("tab"))?.tab ?? "offerings";

export interface Field {
  key: string;
  label: string;
  kind: "text" | "int" | "credits" | "select" | "bool" | "list";
  options?: readonly string[];
  required?: boolean;
  /** The object's name and other identity: set at creation only. */
  createOnly?: boolean;
  hint?: string;
}

export type Values = Record<string, string>;
export type Built = { ok: true; body: Record<string, unknown> } | { ok: false; field: string; problem: string };

export interface KindForm {
  noun: string;
  fields: Field[];
  /** The form's values for an existing object. */
  values(o: Record<string, unknown>): Values;
  build(v: Values, creating: boolean): Built;
}

const NAME_HINT = "Lowercase letters, digits and dashes; it cannot change later.";
const str = (v: unknown) => (v === null || v === undefined ? "" : String(v));

/** Reads the form field by field; fields left empty are omitted (PATCH keeps them), required ones refused. */
function read(fields: Field[], v: Values, creating: boolean): Built {
  const body: Record<string, unknown> = {};
  for (const f of fields) {
    if (f.createOnly && !creating) continue;
    const raw = (v[f.key] ?? "").trim();
    if (f.kind === "bool") {
      body[f.key] = raw === "true";
      continue;
    }
    if (raw === "") {
      if (f.required && creating) return { ok: false, field: f.key, problem: `${f.label} is required.` };
      continue;
    }
    if (f.kind === "int") {
      if (!/^\d+$/.test(raw)) return { ok: false, field: f.key, problem: "A whole number." };
      body[f.key] = Number(raw);
    } else if (f.kind === "credits") {
      const p = parseCredits(raw);
      if (!p.ok) return { ok: false, field: f.key, problem: p.problem };
      body[f.key] = p.units;
    } else if (f.kind === "list") {
      body[f.key] = raw
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
    } else body[f.key] = raw;
  }
  return { ok: true, body };
}

export const OFFERING_FORM: KindForm = {
  noun: "offering",
  fields: [
    { key: "name", label: "Name", kind: "text", required: true, createOnly: true, hint: NAME_HINT },
    { key: "display_name", label: "Display name", kind: "text", required: true },
    {
      key: "gpu_model",
      label: "GPU model",
      kind: "text",
      required: true,
      hint: "As the nodes label it (nvidia.com/gpu.product).",
    },
    { key: "tier", label: "Tier", kind: "text", required: true, hint: "Such as premium, standard, budget." },
    { key: "gpu_count", label: "GPUs per session", kind: "int" },
    {
      key: "fraction",
      label: "Share of a card",
      kind: "select",
      options: ["1", "1/2", "1/4", "1/8", "1/16", "1/32"],
      hint: "1: whole cards. A slice needs a GPU sharing layer on the clusters with this model.",
    },
    { key: "hourly_credit_rate", label: "Credits per hour", kind: "credits", required: true },
    { key: "description", label: "Description", kind: "text" },
    { key: "enabled", label: "Members may pick it", kind: "bool" },
  ],
  values: (o) => ({
    name: str(o.name),
    display_name: str(o.display_name),
    gpu_model: str(o.gpu_model),
    tier: str(o.tier),
    gpu_count: str(o.gpu_count),
    fraction: str(o.fraction) || "1",
    hourly_credit_rate: o.hourly_credit_rate ? unitsToInput(String(o.hourly_credit_rate)) : "",
    description: str(o.description),
    enabled: o.enabled === false ? "false" : "true",
  }),
  build: (v, creating) => read(OFFERING_FORM.fields, v, creating),
};

export const PRESET_FORM: KindForm = {
  noun: "resource preset",
  fields: [
    { key: "name", label: "Name", kind: "text", required: true, createOnly: true, hint: NAME_HINT },
    { key: "display_name", label: "Display name", kind: "text", required: true },
    { key: "kind", label: "Kind", kind: "select", options: ["gpu", "compute"], required: true },
    { key: "cpu", label: "CPU", kind: "text", required: true, hint: "Kubernetes quantity, such as 4 or 500m." },
    { key: "memory", label: "Memory", kind: "text", required: true, hint: "Kubernetes quantity, such as 16Gi." },
    { key: "gpu_count", label: "GPUs", kind: "int" },
  ],
  values: (o) => ({
    name: str(o.name),
    display_name: str(o.display_name),
    kind: str(o.kind) || "gpu",
    cpu: str(o.cpu),
    memory: str(o.memory),
    gpu_count: str(o.gpu_count),
  }),
  build: (v, creating) => read(PRESET_FORM.fields, v, creating),
};

export const IMAGE_FORM: KindForm = {
  noun: "image",
  fields: [
    { key: "name", label: "Name", kind: "text", required: true, createOnly: true, hint: NAME_HINT },
    { key: "display_name", label: "Display name", kind: "text", required: true },
    {
      key: "image",
      label: "Image reference",
      kind: "text",
      required: true,
      hint: "registry/repository:tag or @sha256:…",
    },
    { key: "kind", label: "Kind", kind: "select", options: ["jupyterlab", "code-server", "terminal"], required: true },
    { key: "visibility", label: "Visibility", kind: "select", options: ["public", "private"] },
    { key: "owner", label: "Owner (private images)", kind: "text", hint: "The user id whose image it is." },
    { key: "description", label: "Description", kind: "text" },
  ],
  values: (o) => ({
    name: str(o.name),
    display_name: str(o.display_name),
    image: str(o.image),
    kind: str(o.kind) || "jupyterlab",
    visibility: str(o.visibility) || "public",
    owner: str(o.owner),
    description: str(o.description),
  }),
  build: (v, creating) => read(IMAGE_FORM.fields, v, creating),
};

const POLICY_LIMITS = Object.keys(LIMIT_LABEL);

export const POLICY_FORM: KindForm = {
  noun: "resource policy",
  fields: [
    { key: "name", label: "Name", kind: "text", required: true, createOnly: true, hint: NAME_HINT },
    {
      key: "scope_kind",
      label: "Applies to",
      kind: "select",
      options: ["organization", "project", "user", "global"],
      createOnly: true,
    },
    {
      key: "scope_id",
      label: "Organization, project or user id",
      kind: "text",
      createOnly: true,
      hint: "Empty for global.",
    },
    { key: "scope_organization", label: "Organization id (user scope)", kind: "text", createOnly: true },
    ...POLICY_LIMITS.map((k) => ({
      key: k,
      label: LIMIT_LABEL[k] as string,
      kind: "int" as const,
      hint: "Empty: no limit here.",
    })),
    { key: "allowed_offerings", label: "Allowed offerings", kind: "list", hint: "Comma-separated names; empty: all." },
  ],
  values: (o) => {
    const scope = (o.scope ?? {}) as { kind?: string; id?: string | null; organization?: string | null };
    const limits = (o.limits ?? {}) as Record<string, number>;
    return {
      name: str(o.name),
      scope_kind: scope.kind ?? "organization",
      scope_id: str(scope.id),
      scope_organization: str(scope.organization),
      ...Object.fromEntries(POLICY_LIMITS.map((k) => [k, str(limits[k])])),
      allowed_offerings: Array.isArray(o.allowed_offerings) ? o.allowed_offerings.join(", ") : "",
    };
  },
  build: (v, creating) => {
    const r = read(POLICY_FORM.fields, v, creating);
    if (!r.ok) return r;
    const b = r.body;
    // Limits replace as a whole on PATCH: every field is sent, the empty ones dropped (no limit).
    const limits = Object.fromEntries(POLICY_LIMITS.flatMap((k) => (b[k] === undefined ? [] : [[k, b[k]]])));
    const body: Record<string, unknown> = { limits };
    if (creating) {
      body.name = b.name;
      const kind = String(b.scope_kind ?? "organization");
      body.scope = {
        kind,
        ...(kind !== "global" && b.scope_id ? { id: b.scope_id } : {}),
        ...(kind === "user" && b.scope_organization ? { organization: b.scope_organization } : {}),
      };
      if (b.allowed_offerings) body.allowed_offerings = b.allowed_offerings;
    } else body.allowed_offerings = b.allowed_offerings ?? null;
    return { ok: true, body };
  },
};

/** Offerings grouped by tier (tiers by name, offerings by rate within one). */
export function byTier<T extends { tier: string; hourly_credit_rate: string; name: string }>(
  offerings: readonly T[],
): [string, T[]][] {
  const m = new Map<string, T[]>();
  for (const o of offerings) m.set(o.tier, [...(m.get(o.tier) ?? []), o]);
  return [...m.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([t, os]) => [
      t,
      os.toSorted(
        (a, b) => Number(BigInt(a.hourly_credit_rate) - BigInt(b.hourly_credit_rate)) || a.name.localeCompare(b.name),
      ),
    ]);
}

/** "GPUs at once, per person 4 · Highest queue priority 0" */
export function limitsLine(limits: Record<string, number | undefined>): string {
  const parts = Object.entries(limits).flatMap(([k, v]) => (v === undefined ? [] : [`${LIMIT_LABEL[k] ?? k} ${v}`]));
  return parts.length ? parts.join(" · ") : "no limits";
}

export const rateText = (minor: string) => `${formatCredits(minor)} / h`;
