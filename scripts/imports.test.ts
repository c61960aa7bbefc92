import { describe, expect, it } from "vitest";
import { cycles, type Edge, subpathTarget } from "./imports.ts";

const edge = (from: string, to: string, typeOnly = false): Edge => ({ from, to, specifier: to, typeOnly });

describe("cycles", () => {
  it("finds none in a graph without loops", () => {
    expect(cycles([edge("a", "b"), edge("b", "c"), edge("a", "c")])).toEqual([]);
  });

  it("finds a loop closed by a type-only import", () => {
    expect(cycles([edge("a", "b"), edge("b", "a", true)])).toEqual([{ loop: ["a", "b", "a"], files: ["a", "b"] }]);
  });

  it("names every file of a tangle once, with one shortest loop through it", () => {
    const found = cycles([edge("a", "b"), edge("b", "c"), edge("c", "a"), edge("b", "a"), edge("c", "d")]);
    expect(found).toEqual([{ loop: ["a", "b", "a"], files: ["a", "b", "c"] }]);
  });

  it("reports separate tangles separately, and a file that imports itself", () => {
    const found = cycles([edge("a", "b"), edge("b", "a"), edge("x", "y"), edge("y", "x"), edge("s", "s")]);
    expect(found.map((c) => c.files).toSorted()).toEqual([["a", "b"], ["s"], ["x", "y"]]);
  });
});

describe("subpathTarget", () => {
  const subpaths = new Map([
    [".", "/r/console/src/server/index.ts"],
    ["./client", "/r/console/src/api/client.ts"],
    ["./test-ids/*", "/r/console/src/test-ids/*.ts"],
  ]);

  it("takes an exact subpath as written", () => {
    expect(subpathTarget(subpaths, "./client")).toBe("/r/console/src/api/client.ts");
  });

  it("fills a pattern's star into its target, as Node does", () => {
    expect(subpathTarget(subpaths, "./test-ids/fair-share")).toBe("/r/console/src/test-ids/fair-share.ts");
  });

  it("finds nothing for a subpath no key matches, nor for an empty star", () => {
    expect(subpathTarget(subpaths, "./test-ids/")).toBeUndefined();
    expect(subpathTarget(subpaths, "./server")).toBeUndefined();
  });
});
