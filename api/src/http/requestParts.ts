// A request's parts as a route declares them (route.ts): each parsed by its zod schema, every problem
// reported as a ValidationIssue rooted at the part it came from, and the NUL character refused anywhere.
import type { Context } from "koa";
import type { z } from "zod";
import type { ValidationIssue } from "../errors.ts";

/**
 * zod issues -> our ValidationIssue, rooted at the part of the request they came from. A refinement names
 * its own stable code with `params: {code}` (else it is zod's "custom").
 */
export function issuesOf(error: z.ZodError, root: string): ValidationIssue[] {
  return error.issues.map((i) => ({
    path: [root, ...i.path.map((p) => (typeof p === "symbol" ? String(p) : p))],
    message: i.message,
    code: i.code === "custom" && typeof i.params?.code === "string" ? i.params.code : i.code,
  }));
}

/**
 * The paths of strings (values or keys) holding U+0000. Postgres refuses that character in text and
 * jsonb (SQLSTATE 22021 / 22P05), so one sent in any field would otherwise reach the database and come
 * back as a 500: it is refused here, for every route, as the bad field it is.
 */
export function nulCharacterPaths(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (typeof value === "string") return value.includes("\u0000") ? [path] : [];
  if (Array.isArray(value)) return value.flatMap((v, i) => nulCharacterPaths(v, [...path, i]));
  if (value === null || typeof value !== "object" || value instanceof Date) return [];
  return Object.entries(value).flatMap(([k, v]) => [
    ...(k.includes("\u0000") ? [[...path, k]] : []),
    ...nulCharacterPaths(v, [...path, k]),
  ]);
}

export function parsePart<S extends z.ZodType | undefined>(
  schema: S,
  value: unknown,
  root: string,
  issues: ValidationIssue[],
): unknown {
  if (!schema) return undefined;
  const r = schema.safeParse(value);
  if (!r.success) {
    issues.push(...issuesOf(r.error, root));
    return undefined;
  }
  const nul = nulCharacterPaths(r.data);
  if (nul.length > 0) {
    issues.push(
      ...nul.map((p) => ({
        path: [root, ...p],
        message: "must not contain the NUL character (U+0000)",
        code: "nul_character",
      })),
    );
    return undefined;
  }
  return r.data;
}

/**
 * The query as string | string[] values (a repeated parameter stays an array), decoded as Koa's ctx.query
 * decodes it (URLSearchParams), without its copy per key (defineProperty showed in the list's profile).
 * No prototype: a parameter named `__proto__` is a key like any other.
 */
export function queryObject(ctx: Context): Record<string, unknown> {
  const out: Record<string, string | string[]> = Object.create(null);
  const qs = ctx.querystring;
  if (qs === "") return out;
  for (const [k, v] of new URLSearchParams(qs)) {
    const prev = out[k];
    if (prev === undefined) out[k] = v;
    else if (Array.isArray(prev)) prev.push(v);
    else out[k] = [prev, v];
  }
  return out;
}
