import { describe, expect, it } from "vitest";
import { droppedField } from "./droppedField.ts";

describe("droppedField: a field the response schema did not keep (a presenter leak)", () => {
  it("is undefined when every field sent was kept", () => {
    const body = { data: [{ id: "a", at: new Date(0), tags: ["x"], nested: { n: 1 } }], pagination: { total: 1 } };
    expect(droppedField(body, structuredClone(body))).toBeUndefined();
  });

  it("names the first field dropped, with its path", () => {
    const sent = { data: [{ id: "a" }, { id: "b", password_hash: "h" }], pagination: { total: 2 } };
    const kept = { data: [{ id: "a" }, { id: "b" }], pagination: { total: 2 } };
    expect(droppedField(sent, kept)).toBe("$.data[1].password_hash");
  });

  it("looks inside nested objects and ignores fields sent as undefined", () => {
    expect(droppedField({ a: { b: { c: 1, secret: 2 } }, gone: undefined }, { a: { b: { c: 1 } } })).toBe(
      "$.a.b.secret",
    );
  });
});
