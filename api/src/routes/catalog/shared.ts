// What the catalog route files share (offerings.ts, presets.ts, images.ts, policies.ts).

/** Copies the fields that are present, renamed from the wire's snake_case to the spec's camelCase. */
export function toSpec(body: Record<string, unknown>, names: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [wire, spec] of Object.entries(names)) if (body[wire] !== undefined) out[spec] = body[wire];
  return out;
}
