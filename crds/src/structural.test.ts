import { describe, expect, it } from "vitest";
import { z } from "zod";
import { immutable, rule } from "./fields.ts";
import { toStructural } from "./structural.ts";

describe("toStructural", () => {
  it("gives every property a type and lists the required ones", () => {
    expect(toStructural(z.object({ a: z.string(), b: z.boolean().optional() }))).toEqual({
      type: "object",
      properties: { a: { type: "string" }, b: { type: "boolean" } },
      required: ["a"],
    });
  });

  it("makes fields with a default optional and hands the default to the apiserver", () => {
    expect(toStructural(z.object({ n: z.int32().default(0) }))).toEqual({
      type: "object",
      properties: { n: { type: "integer", format: "int32", default: 0 } },
    });
  });

  it("turns zod's safe-integer bounds into format int64 and keeps real bounds", () => {
    expect(toStructural(z.int().min(1))).toEqual({ type: "integer", minimum: 1, format: "int64" });
  });

  it("turns a union of literals and a literal into enums", () => {
    expect(toStructural(z.union([z.literal("a"), z.literal("b")]))).toEqual({ type: "string", enum: ["a", "b"] });
    expect(toStructural(z.literal("x"))).toEqual({ type: "string", enum: ["x"] });
  });

  it("turns a record into additionalProperties and a loose object into preserved unknown fields", () => {
    expect(toStructural(z.record(z.string(), z.boolean()))).toEqual({
      type: "object",
      additionalProperties: { type: "boolean" },
    });
    expect(toStructural(z.looseObject({}))).toMatchObject({
      type: "object",
      "x-kubernetes-preserve-unknown-fields": true,
    });
  });

  it("drops additionalProperties false, which a structural schema may not carry", () => {
    expect(toStructural(z.strictObject({ a: z.string() }))).not.toHaveProperty("additionalProperties");
  });

  it("keeps the format of a timestamp and drops zod's regex for it", () => {
    expect(toStructural(z.iso.datetime())).toEqual({ type: "string", format: "date-time" });
  });

  it("carries CEL rules and list types given as metadata", () => {
    const s = toStructural(
      rule(immutable(z.object({ a: z.string() })), "self.a != ''", "a is empty", (v) => v.a !== ""),
    );
    expect(s["x-kubernetes-validations"]).toEqual([
      { rule: "self == oldSelf", message: "is immutable" },
      { rule: "self.a != ''", message: "a is empty" },
    ]);
  });

  it("refuses a union of objects, which has no structural form", () => {
    expect(() =>
      toStructural(z.object({ u: z.union([z.object({ a: z.string() }), z.object({ b: z.string() })]) })),
    ).toThrow(/at \.u: a union that is not a union of literals/);
  });

  it("refuses a pattern that Go's RE2 cannot compile", () => {
    expect(() => toStructural(z.string().regex(/^(?!x)/))).toThrow(/RE2/);
  });

  it("refuses what JSON cannot carry, such as a Date", () => {
    expect(() => toStructural(z.object({ at: z.date() }))).toThrow();
  });
});
