// Every operation of the committed OpenAPI document, fed bad input by three kinds of caller, against the
// real API on a real database: nothing may crash (no 5xx but 503 `unavailable`, which the test API without
// a management cluster answers for the catalog and the sessions' runtime), every error is the
// contract's envelope whose request id is the one the caller sent and the one the header echoes, every
// status is one the operation documents, and a request its documented schema refuses is never accepted
// (2xx): a field silently taken as it came is a failure, not a pass.
//
// The cases are data: PATH_VALUES, QUERY_VALUES, WHOLE_BODIES and FIELD_VALUES below, applied to whatever
// parameters and body each operation documents. A body is first made "almost valid" from its schema (real
// ids of the test world where a field names one), so that changing one field at a time gets past the
// other fields' validation and into the handler, where unchecked assumptions live.
import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertSession } from "../db/operations/sessions/insertSession.ts";
import { grantToOrganization } from "../domain/credits/grant.ts";
import { ensureWallet } from "../domain/credits/wallets.ts";
import {
  anIdentityWorld,
  type IdentityTestApi,
  type IdentityWorld,
  startIdentityTestApi,
  type TestUser,
} from "../domain/identity/identity.test-support.ts";

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
// biome-ignore lint/suspicious/noExplicitAny: JSON Schema as found in the OpenAPI document.
type Schema = any;

interface Parameter {
  name: string;
  in: "path" | "query" | "header";
  schema: Schema;
}
interface Operation {
  method: string;
  path: string;
  operationId: string;
  parameters: Parameter[];
  body?: Schema;
  documented: Set<number>;
  public: boolean;
}

const doc = JSON.parse(readFileSync(new URL("../../openapi.json", import.meta.url), "utf8"));
const schemas: Record<string, Schema> = doc.components.schemas;
const DOCUMENTED_CODES: string[] = schemas.ErrorEnvelope.properties.error.properties.code.enum;

const operations: Operation[] = Object.entries(doc.paths as Record<string, Record<string, Schema>>).flatMap(
  ([path, ops]) =>
    Object.entries(ops)
      .filter(([m]) => ["get", "post", "put", "patch", "delete"].includes(m))
      .map(([method, o]) => ({
        method: method.toUpperCase(),
        path,
        operationId: o.operationId,
        parameters: o.parameters ?? [],
        body: o.requestBody?.content?.["application/json"]?.schema,
        documented: new Set(Object.keys(o.responses).map(Number)),
        public: Array.isArray(o.security) && o.security.length === 0,
      })),
);

const resolve = (s: Schema): Schema => (s?.$ref ? resolve(schemas[s.$ref.split("/").at(-1)]) : s);

// What the document promises a client: a request its schemas refuse must not be accepted. Bodies are
// checked as sent; path and query values as strings the schema's type is read from (coerced).
const refsToDoc = (s: Schema): Schema =>
  JSON.parse(JSON.stringify(s ?? {}).replaceAll('"$ref":"#/components/', '"$ref":"openapi#/components/'));
function validator(coerceTypes: boolean) {
  const ajv = new Ajv2020({ strict: false, allErrors: false, coerceTypes, validateFormats: true });
  // ajv-formats is CommonJS: its function is the default export or that export's `default`.
  const add = addFormats as unknown as { default?: (a: Ajv2020) => void } & ((a: Ajv2020) => void);
  (add.default ?? add)(ajv);
  ajv.addSchema({ $id: "openapi", components: doc.components });
  return ajv;
}
const bodyAjv = validator(false);
const paramAjv = validator(true);
/** Whether a value matches a schema of the document (false when it cannot be read at all). */
const compiled = new Map<string, (v: unknown) => boolean>();
function conforms(ajv: Ajv2020, schema: Schema, value: unknown): boolean {
  const key = `${ajv === bodyAjv ? "b" : "p"}${JSON.stringify(schema)}`;
  let check = compiled.get(key);
  if (!check) {
    const v = ajv.compile(refsToDoc(schema));
    check = (x) => v(x) as boolean;
    compiled.set(key, check);
  }
  try {
    return check(structuredClone(value));
  } catch {
    return false;
  }
}
const decoded = (raw: string): string | undefined => {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
};

// ---------------------------------------------------------------------------------------------------------
// The cases. Raw strings go into the URL as they are (so "%00" and "..%2f" arrive percent-encoded); `enc`
// marks a value that is percent-encoded first.
const LONG = "a".repeat(5000);
const UNICODE = "ünïcødé-名前-🚀";
const enc = (s: string) => encodeURIComponent(s);

/** Path parameter values; "unknown" is derived from the real value (same shape, no such object). */
const PATH_VALUES: { name: string; value: (known: string) => string }[] = [
  { name: "wrong shape", value: () => enc("Not An Id!") },
  { name: "unknown", value: (known) => `${known.slice(0, -4)}0000` },
  { name: "very long", value: () => LONG },
  { name: "unicode", value: () => enc(UNICODE) },
  { name: "dot-dot-slash", value: () => "..%2f..%2fetc%2fpasswd" },
  { name: "NUL byte", value: () => "a%00b" },
  { name: "bad percent-encoding", value: () => "%E0%A4%A" },
  { name: "number", value: () => "99999999999999999999999" },
];

/** Query values, each sent alone for one parameter; then the parameter repeated. */
const QUERY_VALUES: { name: string; raw: string }[] = [
  { name: "empty", raw: "" },
  { name: "word", raw: "abc" },
  { name: "zero", raw: "0" },
  { name: "negative", raw: "-1" },
  { name: "fraction", raw: "1.5" },
  { name: "exponent", raw: "1e6" },
  { name: "huge number", raw: "99999999999999999999999" },
  { name: "very long", raw: LONG },
  { name: "unicode", raw: enc(UNICODE) },
  { name: "NUL byte", raw: "a%00b" },
  { name: "bad percent-encoding", raw: "%E0%A4%A" },
  { name: "dot-dot-slash", raw: "..%2f..%2f" },
  { name: "LIKE wildcards and a trailing escape", raw: "%25_%5C" },
  { name: "far-future instant", raw: "9999-12-31T23:59:59Z" },
  { name: "year zero", raw: "0000-01-01T00:00:00Z" },
];

/** Whole bodies: what arrives instead of the object the operation documents. */
const WHOLE_BODIES: { name: string; body: (valid: Json) => { text: string; type?: string } }[] = [
  { name: "almost valid", body: (v) => ({ text: JSON.stringify(v) }) },
  { name: "malformed JSON", body: () => ({ text: '{"a": 1,' }) },
  { name: "wrong content type", body: (v) => ({ text: JSON.stringify(v), type: "text/plain" }) },
  { name: "form content type", body: () => ({ text: "a=1&b=2", type: "application/x-www-form-urlencoded" }) },
  { name: "empty body", body: () => ({ text: "" }) },
  { name: "null", body: () => ({ text: "null" }) },
  { name: "empty array", body: () => ({ text: "[]" }) },
  { name: "array of the object", body: (v) => ({ text: JSON.stringify([v]) }) },
  { name: "string", body: () => ({ text: '"hello"' }) },
  { name: "number", body: () => ({ text: "42" }) },
  { name: "empty object", body: () => ({ text: "{}" }) },
  { name: "extra keys", body: (v) => ({ text: JSON.stringify({ ...(v as object), unexpected: 1, admin: true }) }) },
  {
    name: "prototype keys",
    body: (v) => ({
      text: `{"__proto__": {"polluted": true}, "constructor": {"prototype": {"x": 1}}, ${JSON.stringify(v).slice(1)}`,
    }),
  },
  { name: "deeply nested", body: () => ({ text: `${"[".repeat(5000)}${"]".repeat(5000)}` }) },
];

const HUGE_NUMBER = "\u0001huge-number";
/** JSON text of a body; HUGE_NUMBER becomes the literal 99999999999999999999999 (a JavaScript number cannot hold it). */
const jsonText = (v: Json) => JSON.stringify(v).replaceAll(`"${HUGE_NUMBER}"`, "99999999999999999999999");

/** One top-level field of the almost valid body at a time. */
const FIELD_VALUES: { name: string; value: (current: Json) => Json }[] = [
  { name: "null", value: () => null },
  {
    name: "type swapped",
    value: (c) =>
      typeof c === "string"
        ? Number.isFinite(Number(c)) && c !== ""
          ? Number(c)
          : 42
        : typeof c === "number"
          ? String(c)
          : typeof c === "boolean"
            ? String(c)
            : "text",
  },
  { name: "'1e6'", value: () => "1e6" },
  { name: "'-1'", value: () => "-1" },
  { name: "'99999999999999999999999'", value: () => "99999999999999999999999" },
  { name: "1e6", value: () => 1e6 },
  { name: "-1", value: () => -1 },
  // A JSON number a double cannot hold: written into the text as is (see jsonText).
  { name: "99999999999999999999999", value: () => HUGE_NUMBER },
  { name: "1.5", value: () => 1.5 },
  { name: "NUL in a string", value: () => "a\u0000b" },
  { name: "very long string", value: () => LONG },
  { name: "unicode", value: () => UNICODE },
  { name: "array", value: (c) => [c] },
  { name: "object", value: () => ({ a: 1 }) },
  { name: "empty string", value: () => "" },
  { name: "whitespace only", value: () => "   " },
  { name: "punctuation only", value: () => "!!!" },
  { name: "LIKE wildcards and a trailing escape", value: () => "%_\\" },
  { name: "largest amount", value: () => "999999999999999999" },
  { name: "'0'", value: () => "0" },
  { name: "true", value: () => true },
];

/** Credentials that must not pass, each on every operation that needs a caller. */
const AUTH_CASES: { name: string; authorization?: () => string; code: string }[] = [
  { name: "expired token", authorization: () => `Bearer ${tokens.expired}`, code: "token_expired" },
  { name: "deleted user's token", authorization: () => `Bearer ${tokens.deleted}`, code: "unauthenticated" },
  { name: "garbage token", authorization: () => "Bearer not.a.jwt", code: "unauthenticated" },
  { name: "no token", code: "unauthenticated" },
  { name: "Basic scheme", authorization: () => "Basic dXNlcjpwYXNzd29yZA==", code: "unauthenticated" },
  { name: "Bearer without a token", authorization: () => "Bearer ", code: "unauthenticated" },
  { name: "very long token", authorization: () => `Bearer ${"a".repeat(8000)}`, code: "unauthenticated" },
  {
    name: "unsigned (alg none) super_admin claims",
    authorization: () => `Bearer ${tokens.unsigned}`,
    code: "unauthenticated",
  },
  {
    name: "member's signature on super_admin claims",
    authorization: () => `Bearer ${tokens.tampered}`,
    code: "unauthenticated",
  },
];

/** Headers the layer reads, sent wrong by a super_admin. */
const HEADER_CASES: { name: string; headers: Record<string, string>; code?: string; idempotencyOnly?: boolean }[] = [
  { name: "X-Request-Id with spaces", headers: { "X-Request-Id": "not a sane id" } },
  { name: "X-Request-Id too long", headers: { "X-Request-Id": "r".repeat(500) } },
  {
    name: "Idempotency-Key with bad characters",
    headers: { "Idempotency-Key": "bad key!" },
    code: "validation_failed",
    idempotencyOnly: true,
  },
  {
    name: "Idempotency-Key too long",
    headers: { "Idempotency-Key": "k".repeat(300) },
    code: "validation_failed",
    idempotencyOnly: true,
  },
];

const tokens = { expired: "", deleted: "", unsigned: "", tampered: "" };

// ---------------------------------------------------------------------------------------------------------
// The world: one API, users reused, and the real ids an almost valid request names.
let t: IdentityTestApi;
let w: IdentityWorld;
let victim: TestUser;
const known: Record<string, string> = {};
let n = 0;

/** A value for a string field, by its name first (real ids), then by what its schema accepts. */
function sampleString(name: string, s: Schema): string {
  const byName: Record<string, string | undefined> = {
    organization_id: known.organizationId,
    organization: known.organizationId,
    project_id: known.projectId,
    project: known.projectId,
    cluster_id: known.clusterId,
    cluster: known.clusterId,
    session_id: known.sessionId,
    user_id: known.userId,
    owner_id: known.projectId,
    wallet_id: known.walletId,
    from_wallet_id: known.walletId,
    source_wallet_id: known.walletId,
    to_wallet_id: known.projectWalletId,
    email: `bad-input-${n++}@example.test`,
    password: "correct horse battery staple 2",
    new_password: "correct horse battery staple 2",
    current_password: "not the current password",
  };
  const v = byName[name];
  if (v !== undefined) return v;
  if (s.enum) return s.enum[0];
  if (s.example !== undefined && typeof s.example === "string") return s.example;
  if (s.default !== undefined && typeof s.default === "string") return s.default;
  if (s.format === "date-time") return new Date().toISOString();
  const candidates = ["1000000", "demo", "a", "clu_abc", `ses_${"a".repeat(20)}`, "1", "1Gi", "100m", "grant"];
  if (s.pattern) {
    const re = new RegExp(s.pattern);
    return candidates.find((c) => re.test(c)) ?? "a";
  }
  return s.minLength && s.minLength > 4 ? "a".repeat(s.minLength) : "demo";
}

/** An almost valid value of a schema: every property present, ids real where the name says which. */
function sample(s0: Schema, name = ""): Json {
  const s = resolve(s0);
  if (!s) return null;
  if (s.anyOf || s.oneOf)
    return sample(
      (s.anyOf ?? s.oneOf).find((x: Schema) => resolve(x)?.type !== "null"),
      name,
    );
  if (s.allOf) return sample(s.allOf[0], name);
  if (s.enum) return s.enum[0];
  switch (s.type) {
    case "object":
      return Object.fromEntries(Object.entries(s.properties ?? {}).map(([k, v]) => [k, sample(v, k)]));
    case "array":
      return [sample(s.items, name)];
    case "integer":
    case "number":
      return s.minimum !== undefined && s.minimum > 1 ? s.minimum : 1;
    case "boolean":
      return false;
    case "string":
      return sampleString(name, s);
    default:
      return null;
  }
}

function knownPathValue(op: Operation, name: string): string {
  if (name === "name") return op.path.includes("resource-policies") ? "policy-a" : "demo";
  return known[name] ?? "demo";
}

// ---------------------------------------------------------------------------------------------------------
interface Request {
  op: Operation;
  kind: "path" | "query" | "body" | "field" | "auth" | "header";
  caseName: string;
  as: string;
  token?: string;
  url: string;
  body?: { text: string; type?: string };
  /** Sent after the others (an Authorization here replaces the token's). */
  headers?: Record<string, string>;
  /** The error code the case must answer, when it is certain (auth and header cases). */
  expectCode?: string;
  /** False when the documented schemas refuse the request: then a 2xx is a failure. */
  conforms?: boolean;
}

function pathWith(op: Operation, override: Record<string, string> = {}): string {
  return op.path.replace(/\{([^}]+)\}/g, (_, p: string) => override[p] ?? enc(knownPathValue(op, p)));
}

/** The fields of an object body, and those of its object fields (one level down). */
function fieldPaths(v: Json | undefined): string[][] {
  if (!v || typeof v !== "object" || Array.isArray(v)) return [];
  return Object.entries(v).flatMap(([k, x]) => [
    [k],
    ...(x && typeof x === "object" && !Array.isArray(x) ? Object.keys(x).map((k2) => [k, k2]) : []),
  ]);
}

/** A copy of `v` with the field at `path` replaced (undefined: removed). */
function withField(v: Json | undefined, path: string[], f: (current: Json | undefined) => Json | undefined): Json {
  const copy = { ...(v as Record<string, Json>) };
  const [head, ...rest] = path as [string, ...string[]];
  const next = rest.length === 0 ? f(copy[head]) : withField(copy[head], rest, f);
  if (next === undefined) delete copy[head];
  else copy[head] = next;
  return copy;
}

function casesFor(op: Operation, callers: { as: string; token: string }[]): Request[] {
  const out: Request[] = [];
  const pathParams = op.parameters.filter((p) => p.in === "path");
  const queryParams = op.parameters.filter((p) => p.in === "query");
  const valid = op.body ? sample(op.body) : undefined;
  const fields = fieldPaths(valid);
  for (const [i, c] of callers.entries()) {
    const base = { op, as: c.as, token: c.token };
    for (const p of pathParams) {
      for (const v of PATH_VALUES) {
        const raw = v.value(knownPathValue(op, p.name));
        const value = decoded(raw);
        out.push({
          ...base,
          kind: "path",
          caseName: `path ${p.name}: ${v.name}`,
          url: pathWith(op, { [p.name]: raw }),
          ...(valid !== undefined ? { body: { text: JSON.stringify(valid) } } : {}),
          conforms: value !== undefined && conforms(paramAjv, p.schema, value),
        });
      }
    }
    for (const q of queryParams) {
      const values: { name: string; qs: string; value?: string | undefined }[] = QUERY_VALUES.map((v) => ({
        name: v.name,
        qs: `${q.name}=${v.raw}`,
        // As node's querystring reads it: a sequence that does not decode stays as it came.
        value: decoded(v.raw) ?? v.raw,
      }));
      const ok = enc(String(sample(q.schema, q.name) ?? "1"));
      values.push({ name: "repeated", qs: `${q.name}=${ok}&${q.name}=${ok}` });
      values.push({ name: "repeated, one bad", qs: `${q.name}=${ok}&${q.name}=abc` });
      values.push({ name: "bracketed", qs: `${q.name}[a]=1` });
      values.push({ name: "beside __proto__ and constructor", qs: `__proto__=x&constructor=y&${q.name}=${ok}` });
      for (const v of values) {
        // Single values are checked against the parameter's schema; repeated and bracketed forms are not
        // described by it, so any documented answer goes.
        const single = "value" in v;
        out.push({
          ...base,
          kind: "query",
          caseName: `query ${q.name}: ${v.name}`,
          url: `${pathWith(op)}?${v.qs}`,
          ...(single && v.value !== undefined ? { conforms: conforms(paramAjv, q.schema, v.value) } : {}),
        });
      }
    }
    if (op.body) {
      for (const b of WHOLE_BODIES) {
        const body = b.body(valid ?? {});
        let parsed: unknown;
        let json = body.type === undefined;
        try {
          parsed = JSON.parse(body.text);
        } catch {
          json = false;
        }
        out.push({
          ...base,
          kind: "body",
          caseName: `body: ${b.name}`,
          url: pathWith(op),
          body,
          conforms: json && conforms(bodyAjv, op.body, parsed),
        });
      }
      if (i === 0)
        out.push({
          ...base,
          kind: "body",
          caseName: "body: over the size limit",
          url: pathWith(op),
          body: { text: JSON.stringify({ pad: "x".repeat(1_100_000) }) },
          conforms: false,
        });
      // One field at a time, as the super_admin, whom no refusal stops before the handler's own work
      // (the org admin's field sweep found nothing more and doubled the run time).
      if (i === 0) {
        for (const f of fields) {
          for (const v of FIELD_VALUES) {
            const mutated = withField(valid, f, (c) => v.value(c ?? null));
            out.push({
              ...base,
              kind: "field",
              caseName: `field ${f.join(".")}: ${v.name}`,
              url: pathWith(op),
              body: { text: jsonText(mutated) },
              conforms: conforms(bodyAjv, op.body, JSON.parse(jsonText(mutated))),
            });
          }
          const without = withField(valid, f, () => undefined);
          out.push({
            ...base,
            kind: "field",
            caseName: `field ${f.join(".")}: missing`,
            url: pathWith(op),
            body: { text: JSON.stringify(without) },
            conforms: conforms(bodyAjv, op.body, without),
          });
        }
      }
    }
  }
  const body = valid !== undefined ? { body: { text: JSON.stringify(valid) } } : {};
  if (!op.public) {
    for (const a of AUTH_CASES) {
      out.push({
        op,
        kind: "auth",
        caseName: a.name,
        as: a.name,
        headers: a.authorization === undefined ? {} : { Authorization: a.authorization() },
        url: pathWith(op),
        ...body,
        expectCode: a.code,
      });
    }
  }
  const [first] = callers;
  if (first) {
    const idempotent = op.parameters.some((p) => p.in === "header" && p.name === "Idempotency-Key");
    // Unknown objects: the headers are read before the handler, and a valid id here would let a
    // super_admin's DELETE or action really happen to the world the other operations need.
    const nowhere = pathWith(
      op,
      Object.fromEntries(pathParams.map((p) => [p.name, `${knownPathValue(op, p.name).slice(0, -4)}0000`])),
    );
    for (const h of HEADER_CASES.filter((x) => idempotent || !x.idempotencyOnly)) {
      out.push({
        op,
        kind: "header",
        caseName: h.name,
        as: first.as,
        ...(op.public ? {} : { token: first.token }),
        headers: h.headers,
        url: nowhere,
        ...body,
        ...(h.code ? { expectCode: h.code } : {}),
      });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
interface Outcome {
  req: Request;
  status: number;
  problem?: string;
}

async function send(req: Request): Promise<Outcome> {
  const ours = `bad-input-${(n++).toString(36).padStart(6, "0")}`;
  const headers: Record<string, string> = { "X-Request-Id": ours };
  if (req.token) headers.Authorization = `Bearer ${req.token}`;
  if (req.body) headers["Content-Type"] = req.body.type ?? "application/json";
  Object.assign(headers, req.headers ?? {});
  // An id the API does not keep is replaced by its own: then the header and the envelope must agree.
  const sent = headers["X-Request-Id"] as string;
  const kept = /^[A-Za-z0-9._:-]{8,128}$/.test(sent);
  const res = await fetch(t.api.url + req.url, {
    method: req.op.method,
    headers,
    ...(req.body && req.body.text !== "" ? { body: req.body.text } : {}),
    signal: AbortSignal.timeout(10_000),
  });
  const type = res.headers.get("content-type") ?? "";
  const problems: string[] = [];
  const requestId = res.headers.get("x-request-id");
  if (!requestId || (kept ? requestId !== sent : requestId === sent))
    problems.push(`x-request-id ${requestId} for ${sent.slice(0, 40)}`);
  if (!req.op.documented.has(res.status)) problems.push(`status ${res.status} is not documented for the operation`);
  if (res.status < 400) {
    // A stream (events, logs) stays open: the headers are the answer.
    await res.body?.cancel();
    if (req.expectCode) problems.push(`expected ${req.expectCode}, got ${res.status}`);
    if (res.status < 300 && req.conforms === false) problems.push("accepted a request its documented schema refuses");
    return { req, status: res.status, ...(problems.length ? { problem: problems.join("; ") } : {}) };
  }
  const text = await res.text();
  let env: Schema;
  try {
    env = JSON.parse(text);
  } catch {
    problems.push(`not JSON (${type}): ${text.slice(0, 200)}`);
  }
  const e = env?.error;
  if (!e) problems.push(`no envelope: ${text.slice(0, 200)}`);
  else {
    if (!DOCUMENTED_CODES.includes(e.code)) problems.push(`undocumented code ${e.code}`);
    if (typeof e.message !== "string" || e.message === "") problems.push("no message");
    if (typeof e.details !== "object" || e.details === null || Array.isArray(e.details))
      problems.push("details not an object");
    if (e.request_id !== requestId) problems.push(`request_id ${e.request_id} but header ${requestId}`);
    if (typeof e.timestamp !== "string" || Number.isNaN(Date.parse(e.timestamp)))
      problems.push(`timestamp ${e.timestamp}`);
  }
  if (res.status >= 500 && !(res.status === 503 && e?.code === "unavailable"))
    problems.push(`status ${res.status} ${e?.code}`);
  if (req.expectCode && e?.code !== req.expectCode)
    problems.push(`expected ${req.expectCode}, got ${res.status} ${e?.code}`);
  return { req, status: res.status, ...(problems.length ? { problem: problems.join("; ") } : {}) };
}

async function inParallel<T, R>(items: T[], width: number, f: (x: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await f(items[i] as T);
      }
    }),
  );
  return out;
}

// ---------------------------------------------------------------------------------------------------------
const results: Outcome[] = [];

describe("bad input on every operation of openapi.json", () => {
  let callers: { as: string; token: string }[];

  beforeAll(async () => {
    t = await startIdentityTestApi();
    w = await anIdentityWorld(t);
    victim = await t.aUser();
    await t.member(victim, w.orgA.id, w.projectA.id, "member");
    const now = t.clock.now();
    const orgWallet = (
      await grantToOrganization(t.database.db, {
        organizationId: w.orgA.id,
        amount: 1000n * 1_000_000n,
        actorKind: "system",
        actorId: null,
        reason: "test",
        at: now,
      })
    ).wallet;
    const projectWallet = (
      await ensureWallet(t.database.db, { organizationId: w.orgA.id, kind: "project", id: w.projectA.id }, now)
    ).wallet;
    Object.assign(known, {
      organizationId: w.orgA.id,
      projectId: w.projectA.id,
      userId: victim.id,
      walletId: orgWallet.id,
      projectWalletId: projectWallet.id,
      clusterId: "clu_badinput",
      sessionId: `ses_${"b".repeat(20)}`,
      nodeName: "node-a",
    });
    // A cluster and a queued session of the member's, as rows: the routes that find them in the
    // database get past "not found" into their own work (those that need the cluster itself answer 503).
    await t.database
      .db("clusters")
      .insert({ id: known.clusterId, name: "bad-input", session_domain: "bad-input.test" });
    await insertSession(t.database.db, {
      id: known.sessionId as string,
      cr_name: known.sessionId as string,
      namespace: "berth-sessions",
      owner_id: w.memberA.id,
      organization_id: w.orgA.id,
      project_id: w.projectA.id,
      display_name: "bad input",
      offering: "h100",
      preset: "small",
      image: "jupyterlab",
      gpu_model: "H100",
      gpu_count: 1,
      hourly_credit_rate: "1000000",
      cluster_pin: null,
      priority: 0,
      created_at: now,
    });
    await t.database.db("sessions").where({ id: known.sessionId }).update({ phase: "Queued", queued_at: now });
    const refill = await t.request("POST", "/api/v1/credits/refills", {
      token: w.adminA.token,
      json: { wallet_id: projectWallet.id, mode: "top_up_to", amount: "5000000", period: "monthly" },
    });
    expect(refill.status, JSON.stringify(refill.body)).toBe(201);
    known.refillId = refill.body.id;
    const ask = await t.request("POST", "/api/v1/credits/requests", {
      token: w.memberA.token,
      json: { organization_id: w.orgA.id, amount: "5000000", reason: "bad input" },
    });
    expect(ask.status, JSON.stringify(ask.body)).toBe(201);
    known.requestId = ask.body.id;

    const doomed = await t.aUser();
    tokens.deleted = doomed.token;
    const del = await t.request("DELETE", `/api/v1/users/${doomed.id}`, { token: w.superAdmin.token });
    expect(del.status, JSON.stringify(del.body)).toBe(204);
    tokens.expired = await t.expiredTokenFor(w.memberA.id);
    // The super_admin's own claims, unsigned; and the same claims under the member's signature.
    const [head, claims] = w.superAdmin.token.split(".") as [string, string];
    const none = Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url");
    tokens.unsigned = `${none}.${claims}.`;
    tokens.tampered = `${head}.${claims}.${w.memberA.token.split(".")[2]}`;
    callers = [
      { as: "super_admin", token: w.superAdmin.token },
      { as: "org_admin", token: w.adminA.token },
      { as: "member", token: w.memberA.token },
    ];
  });

  afterAll(async () => {
    printSummary();
    await t?.stop();
  });

  it("serves the same document as the one committed", async () => {
    const r = await t.request("GET", "/api/v1/openapi.json");
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.paths).sort()).toEqual(Object.keys(doc.paths).sort());
  });

  for (const op of operations) {
    it(`${op.method} ${op.path} answers every bad input with the envelope and no 5xx`, async () => {
      const outcomes = await inParallel(casesFor(op, callers), 8, send);
      results.push(...outcomes);
      const bad = outcomes
        .filter((o) => o.problem)
        .map((o) => `${o.req.as} ${o.req.caseName} -> ${o.status}: ${o.problem}`);
      expect(bad).toEqual([]);
    });
  }
});

function printSummary(): void {
  const ops = new Set(results.map((r) => r.req.op.operationId));
  const byKind = new Map<string, number>();
  const byStatus = new Map<number, number>();
  const undocumented = new Map<string, Set<number>>();
  for (const r of results) {
    byKind.set(r.req.kind, (byKind.get(r.req.kind) ?? 0) + 1);
    byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
    if (!r.req.op.documented.has(r.status)) {
      const k = `${r.req.op.method} ${r.req.op.path}`;
      undocumented.set(k, (undocumented.get(k) ?? new Set()).add(r.status));
    }
  }
  const perOp = new Map<string, { cases: Set<string>; statuses: Map<number, number> }>();
  for (const r of results) {
    const k = `${r.req.op.method} ${r.req.op.path}`;
    const e = perOp.get(k) ?? { cases: new Set<string>(), statuses: new Map<number, number>() };
    e.cases.add(r.req.caseName);
    e.statuses.set(r.status, (e.statuses.get(r.status) ?? 0) + 1);
    perOp.set(k, e);
  }
  const caseNames = new Set(results.map((r) => `${r.req.kind} ${r.req.caseName}`));
  const lines = [
    `bad input: ${ops.size} operations × ${caseNames.size} distinct cases (per parameter and field) = ${results.length} requests`,
    ...[...perOp].map(
      ([k, e]) =>
        `  ${k.padEnd(58)} ${String(e.cases.size).padStart(4)} cases  ${[...e.statuses]
          .sort((a, b) => a[0] - b[0])
          .map(([s, c]) => `${s}×${c}`)
          .join(" ")}`,
    ),
    `bad input: ${ops.size} operations × ${results.length} requests (${[...byKind].map(([k, v]) => `${k} ${v}`).join(", ")})`,
    `  statuses: ${[...byStatus]
      .sort((a, b) => a[0] - b[0])
      .map(([s, c]) => `${s}×${c}`)
      .join(" ")}`,
    `  problems: ${results.filter((r) => r.problem).length}`,
    `  statuses answered but not documented by the operation: ${undocumented.size === 0 ? "none" : ""}`,
    ...[...undocumented].map(([k, s]) => `    ${k}: ${[...s].sort().join(", ")}`),
  ];
  console.log(lines.join("\n"));
}
