// zod → structural OpenAPI v3 schema, as apiextensions.k8s.io/v1 demands it. We build on zod's own
// JSON Schema output (OpenAPI 3.0 flavour: `nullable`, boolean `exclusiveMinimum`) and then rewrite it
// under a whitelist: anything we do not know how to express structurally throws, naming the path,
// rather than being dropped in silence.
import { z } from "zod";

export type JSONSchemaProps = { [key: string]: unknown };

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const INT32 = 2 ** 31;

/** Keywords copied as they are (after their children are converted). */
const KEPT = new Set([
  "type",
  "format",
  "description",
  "default",
  "enum",
  "nullable",
  "required",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "pattern",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
]);

export function toStructural(schema: z.ZodType): JSONSchemaProps {
  const json = z.toJSONSchema(schema, {
    target: "openapi-3.0",
    // Input side: fields with a default are optional, and the apiserver fills the default in.
    io: "input",
    unrepresentable: "throw",
    cycles: "throw",
    reused: "inline",
  }) as JSONSchemaProps;
  delete json.$schema;
  return convert(json, "");
}

function convert(node: JSONSchemaProps, path: string): JSONSchemaProps {
  const fail = (why: string): never => {
    throw new Error(`cannot make a structural schema at ${path || "<root>"}: ${why}`);
  };
  if (node.anyOf) return convert(enumOfConsts(node, fail), path);
  if (Object.keys(node).length === 0) return { "x-kubernetes-preserve-unknown-fields": true };

  const out: JSONSchemaProps = {};
  for (const [key, value] of Object.entries(node)) {
    if (KEPT.has(key) || key.startsWith("x-kubernetes-")) out[key] = value;
    else if (key === "properties") {
      out.properties = Object.fromEntries(
        Object.entries(value as Record<string, JSONSchemaProps>).map(([k, v]) => [k, convert(v, `${path}.${k}`)]),
      );
    } else if (key === "items") out.items = convert(value as JSONSchemaProps, `${path}[]`);
    else if (key === "additionalProperties") {
      // false is forbidden in a structural schema; the apiserver prunes unknown fields anyway.
      if (value === false) continue;
      const loose = value === true || Object.keys(value as object).length === 0;
      if (loose) out["x-kubernetes-preserve-unknown-fields"] = true;
      else out.additionalProperties = convert(value as JSONSchemaProps, `${path}{}`);
    } else if (key === "propertyNames") {
      // A record's key schema; Kubernetes cannot constrain map keys outside CEL.
      if ((value as JSONSchemaProps).type !== "string" || Object.keys(value as object).length > 1)
        fail("map keys other than plain strings");
    } else fail(`unsupported keyword "${key}"`);
  }

  if (!out.type && !out["x-kubernetes-preserve-unknown-fields"] && !out["x-kubernetes-int-or-string"]) fail("no type");
  if (out.type === "integer") integerFormat(out);
  // zod adds its own regex to formats (date-time, hostname); those use lookaheads that RE2 rejects,
  // and the apiserver checks the format itself.
  if (out.format) delete out.pattern;
  if (typeof out.pattern === "string" && /\(\?[=!<]|\\[1-9]/.test(out.pattern))
    fail(`pattern ${out.pattern} needs lookaround or backreferences, which Go's RE2 lacks`);
  const { type, ...rest } = out; // type first: easier to read in the YAML
  return type ? { type, ...rest } : rest;
}

/** z.int() and z.int32() come out as bounds; the apiserver knows them as formats. */
function integerFormat(out: JSONSchemaProps): void {
  if (out.minimum === -MAX_SAFE) delete out.minimum;
  if (out.maximum === MAX_SAFE) delete out.maximum;
  if (out.minimum === -INT32 && out.maximum === INT32 - 1) {
    delete out.minimum;
    delete out.maximum;
    out.format ??= "int32";
  }
  out.format ??= "int64";
}

/** A union of literals is an enum; any other union has no structural form. */
function enumOfConsts(node: JSONSchemaProps, fail: (why: string) => never): JSONSchemaProps {
  const branches = node.anyOf as JSONSchemaProps[];
  const types = new Set(branches.map((b) => b.type));
  if (types.size !== 1 || !branches.every((b) => Array.isArray(b.enum)))
    fail("a union that is not a union of literals");
  const { anyOf: _, ...rest } = node;
  return { ...rest, type: branches[0]?.type, enum: branches.flatMap((b) => b.enum as unknown[]) };
}
