// Package boundaries and import cycles, checked on the repository's own import graph (scripts/imports.ts).
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cycles, importGraph, workspaceOf } from "./imports.ts";

const root = join(import.meta.dirname, "..");
const graph = await importGraph(root);

describe("the repository's imports", () => {
  it("all resolve, including every @berth/* subpath", () => {
    expect(graph.unresolved, `imports that resolve to nothing:\n${graph.unresolved.join("\n")}`).toEqual([]);
  });

  it("reach another workspace only through its package name, never by relative path", () => {
    const reaching = graph.edges
      .filter((e) => e.specifier.startsWith(".") && workspaceOf(e.from) !== workspaceOf(e.to))
      .map((e) => `${e.from}: ${e.specifier}`);
    expect(
      reaching,
      `relative imports into another workspace (use @berth/<workspace>/<subpath>):\n${reaching.join("\n")}`,
    ).toEqual([]);
  });

  // Type-only imports count: they are erased at run time, but a loop of types still ties the files together
  // (neither can be read, moved or tested without the other), and the loops named in issue 17 were mostly
  // of this kind. madge and dpdm count them too by default.
  it("form no cycle between files", () => {
    const found = cycles(graph.edges);
    const listed = found.map(({ loop, files }) =>
      files.length + 1 > loop.length ? `${loop.join(" -> ")} (in a tangle of: ${files.join(", ")})` : loop.join(" -> "),
    );
    expect(listed, `import cycles (one loop per tangle of files):\n${listed.join("\n")}`).toEqual([]);
  });
});
