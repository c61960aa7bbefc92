// Package boundaries and import cycles, checked on the repository's own import graph (scripts/imports.ts).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cycles, importGraph, WORKSPACES, workspaceOf } from "./imports.ts";

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

  it("name only @berth/* packages their workspace declares as a dependency", () => {
    const declared = new Map<string, Set<string>>(
      WORKSPACES.map((ws) => {
        const pkg = JSON.parse(readFileSync(join(root, ws, "package.json"), "utf8"));
        return [ws, new Set(Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }))] as const;
      }),
    );
    const undeclared = graph.edges
      .filter((e) => e.specifier.startsWith("@berth/") && workspaceOf(e.from) !== workspaceOf(e.to))
      .filter((e) => {
        const ws = workspaceOf(e.from);
        const name = e.specifier.split("/").slice(0, 2).join("/");
        return declared.has(ws) && !declared.get(ws)?.has(name);
      })
      .map((e) => `${e.from}: ${e.specifier} (add it to ${workspaceOf(e.from)}/package.json)`);
    expect(undeclared, `imports of undeclared workspaces:\n${undeclared.join("\n")}`).toEqual([]);
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

// The console's views and components only render: what they show comes through a loader per noun in
// console/src/app/ (sessions.ts, credits.ts, …), so the same list is fetched one way everywhere and a view
// can be read without the wire format.
describe("the console's views and components", () => {
  const dirs = ["console/src/views", "console/src/components"];
  const files = dirs.flatMap((d) =>
    (readdirSync(join(root, d), { recursive: true }) as string[])
      .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
      .map((f) => join(d, f)),
  );

  it("are found", () => {
    expect(files.length).toBeGreaterThan(30);
  });

  it("never call the API client themselves (api.call, api.fetchRaw): a loader in console/src/app does", () => {
    const calling = files.filter((f) =>
      /\bapi\.(call|fetchRaw)\b|import\s*\{[^}]*\bapi\b[^}]*\}\s*from\s*"[./]*app\/context\.ts"/.test(
        readFileSync(join(root, f), "utf8"),
      ),
    );
    expect(
      calling,
      `views or components calling the API (move the call into a loader in console/src/app/):\n${calling.join("\n")}`,
    ).toEqual([]);
  });
});
