// Generates console/src/api/openapi.gen.ts from the API's OpenAPI document, so the console's request and
// response types come from the contract and are never copied by hand (generated,
// committed, labelled, checked by console/src/api/openapi.gen.test.ts).
//
//   node console/scripts/gen-api-types.ts          writes the file
//   node console/scripts/gen-api-types.ts --check  exits 1 when the file is out of date
//
// Source: api/openapi.json (committed by the API). When that file is not there yet, the document is built
// from the API's contract export, which is what api/openapi.json is generated from anyway.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..", "..");
export const GENERATED_PATH = join(root, "console/src/api/openapi.gen.ts");
const OPENAPI_PATH = join(root, "api/openapi.json");

interface SchemaObject {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, SchemaObject>;
  required?: string[];
  additionalProperties?: boolean | SchemaObject;
  items?: SchemaObject;
  prefixItems?: SchemaObject[];
  anyOf?: SchemaObject[];
  oneOf?: SchemaObject[];
  allOf?: SchemaObject[];
  description?: string;
}
interface Parameter {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required?: boolean;
  schema?: SchemaObject;
  description?: string;
}
interface Operation {
  operationId: string;
  summary?: string;
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: SchemaObject }> };
  responses?: Record<string, { content?: Record<string, { schema?: SchemaObject }> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, SchemaObject> };
}

export async function loadDocument(): Promise<{ doc: Document; source: string }> {
  if (existsSync(OPENAPI_PATH))
    return { doc: JSON.parse(readFileSync(OPENAPI_PATH, "utf8")) as Document, source: "api/openapi.json" };
  const { buildOpenApiDocument } = await import("@berth/api/openapi");
  const { contractRoutes } = await import("@berth/api/contract");
  return { doc: buildOpenApiDocument(contractRoutes) as unknown as Document, source: "api/src/contract.ts" };
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const key = (k: string) => (IDENT.test(k) ? k : JSON.stringify(k));
const typeName = (ref: string) => ref.replace(/^#\/components\/schemas\//, "").replace(/[^A-Za-z0-9_$]/g, "_");

function comment(text: string | undefined, indent: string): string {
  if (!text) return "";
  return `${indent}/** ${text.replace(/\*\//g, "*\\/").replace(/\s*\n\s*/g, " ")} */\n`;
}

/** One JSON schema (the subset zod-openapi writes) as a TypeScript type expression. */
export function tsType(s: SchemaObject | undefined, indent = ""): string {
  if (!s || Object.keys(s).filter((k) => k !== "description").length === 0) return "unknown";
  if (s.$ref) return typeName(s.$ref);
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(" | ");
  if (s.anyOf || s.oneOf) return union((s.anyOf ?? s.oneOf ?? []).map((x) => tsType(x, indent)));
  if (s.allOf) return s.allOf.map((x) => paren(tsType(x, indent))).join(" & ");
  if (Array.isArray(s.type)) return union(s.type.map((t) => tsType({ ...s, type: t }, indent)));
  switch (s.type) {
    case "string":
      return "string";
    case "integer":
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array":
      if (s.prefixItems) return `[${s.prefixItems.map((x) => tsType(x, indent)).join(", ")}]`;
      return `${paren(tsType(s.items, indent))}[]`;
    case "object":
    case undefined:
      return objectType(s, indent);
    default:
      return "unknown";
  }
}

function objectType(s: SchemaObject, indent: string): string {
  const inner = `${indent}  `;
  const required = new Set(s.required ?? []);
  const lines = Object.entries(s.properties ?? {}).map(
    ([k, v]) => `${comment(v.description, inner)}${inner}${key(k)}${required.has(k) ? "" : "?"}: ${tsType(v, inner)};`,
  );
  if (s.additionalProperties && typeof s.additionalProperties === "object") {
    lines.push(`${inner}[key: string]: ${tsType(s.additionalProperties, inner)};`);
  } else if (s.additionalProperties === undefined && !s.properties) {
    lines.push(`${inner}[key: string]: unknown;`);
  }
  return lines.length ? `{\n${lines.join("\n")}\n${indent}}` : "Record<string, never>";
}

function union(parts: string[]): string {
  const unique = [...new Set(parts)];
  return unique.length === 1 ? (unique[0] ?? "unknown") : unique.map(paren).join(" | ");
}
function paren(t: string): string {
  return /^[\w$."[\]]+$/.test(t) || t.startsWith("{") ? t : `(${t})`;
}

function paramsType(params: Parameter[], indent: string): string {
  if (params.length === 0) return "Record<string, never>";
  const inner = `${indent}  `;
  const lines = params.map(
    (p) =>
      `${comment(p.schema?.description ?? p.description, inner)}${inner}${key(p.name)}${p.required ? "" : "?"}: ${tsType(p.schema, inner)};`,
  );
  return `{\n${lines.join("\n")}\n${indent}}`;
}

export function render(doc: Document, source: string): string {
  const out: string[] = [
    `// GENERATED by console/scripts/gen-api-types.ts from ${source === "api/openapi.json" ? "api/openapi.json" : "the API's OpenAPI document"}. Do not edit by hand:`,
    "// run `npm run gen:types -w console` (a test fails when this file is out of date).",
    "// biome-ignore-all format: generated; the up-to-date test compares it byte for byte",
    "",
  ];
  for (const [name, schema] of Object.entries(doc.components?.schemas ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    out.push(`${comment(schema.description, "")}export type ${typeName(name)} = ${tsType(schema)};`, "");
  }
  const ops: { id: string; method: string; path: string; text: string }[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      if (!op || typeof op !== "object" || !op.operationId) continue;
      const ind = "    ";
      const params = (op.parameters ?? []).filter((p) => p.in === "path");
      const query = (op.parameters ?? []).filter((p) => p.in === "query");
      const body = op.requestBody?.content?.["application/json"]?.schema;
      const ok = Object.entries(op.responses ?? {})
        .filter(([status]) => /^2\d\d$/.test(status))
        .map(([status, r]) => ({
          status: Number(status),
          schema: r.content?.["application/json"]?.schema,
          stream: !!r.content?.["text/event-stream"],
        }));
      const response = ok.length
        ? union(ok.map((r) => (r.status === 204 ? "undefined" : r.stream ? "ReadableStream" : tsType(r.schema, ind))))
        : "unknown";
      const text = [
        `${comment(op.summary, "  ")}  ${key(op.operationId)}: {`,
        `    method: ${JSON.stringify(method)};`,
        `    path: ${JSON.stringify(path)};`,
        `    params: ${paramsType(params, ind)};`,
        `    query: ${paramsType(query, ind)};`,
        `    body: ${body ? tsType(body, ind) : "undefined"};`,
        `    response: ${response};`,
        "  };",
      ].join("\n");
      ops.push({ id: op.operationId, method, path, text });
    }
  }
  ops.sort((a, b) => a.id.localeCompare(b.id));
  out.push(
    "/** Every operation of the public API, by operationId. */",
    "export interface Operations {",
    ...ops.map((o) => o.text),
    "}",
    "",
  );
  out.push(
    "/** Method and path of every operation, for the client at run time. */",
    "export const OPERATIONS = {",
    ...ops.map((o) => `  ${key(o.id)}: { method: ${JSON.stringify(o.method)}, path: ${JSON.stringify(o.path)} },`),
    "} as const;",
    "",
  );
  return out.join("\n");
}

async function main(): Promise<void> {
  const { doc, source } = await loadDocument();
  const text = render(doc, source);
  if (process.argv.includes("--check")) {
    const current = existsSync(GENERATED_PATH) ? readFileSync(GENERATED_PATH, "utf8") : "";
    if (current !== text) {
      console.error("console/src/api/openapi.gen.ts is out of date: run `npm run gen:types -w console`");
      process.exit(1);
    }
    return;
  }
  writeFileSync(GENERATED_PATH, text);
  console.log(`wrote ${GENERATED_PATH} from ${source}`);
}

if (import.meta.main) await main();
