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

// api/ names its files in camelCase (postCharge.ts, sessionStore.ts); the part before the first dot is the
// name, what follows is a kind (.test, .pg.test, .test-support). Left, with their reason:
const API_KEBAB_LEFT = new Set([
  // the worker's entry point, named beside main.ts in package.json, cdk8s' pods and the Containerfile
  "api/src/worker-main.ts",
  "api/src/worker-main.test.ts",
  // being moved in the route and domain rework; renamed there
  "api/src/domain/clusters/node-actions.ts",
  "api/src/domain/clusters/operator-token.test.ts",
  "api/src/domain/clusters/operator-token.ts",
  "api/src/domain/clusters/rotate-token.ts",
  "api/src/domain/clusters/signing-key.ts",
  "api/src/domain/clusters/test-connection.ts",
  "api/src/domain/credits/session-refused-for-credits.test.ts",
  "api/src/domain/credits/torture-child.test-support.ts",
  "api/src/domain/sessions/admission-queue.test.ts",
  "api/src/domain/sessions/create-taken-over.test.ts",
  "api/src/domain/webhooks/dispatcher-child.test-support.ts",
  "api/src/routes/audit-logs/audit-logs.test.ts",
  "api/src/routes/bad-input.test.ts",
  "api/src/routes/image-builds/image-builds.test.ts",
  "api/src/routes/openapi-fuzz.test.ts",
  "api/src/routes/sessions/preview-cost.test.ts",
]);

describe("api's file names", () => {
  it("are camelCase (a kebab-case name is renamed, or listed with its reason)", () => {
    const files = (readdirSync(join(root, "api/src"), { recursive: true }) as string[])
      .filter((f) => f.endsWith(".ts"))
      .map((f) => `api/src/${f}`);
    const kebab = files.filter((f) => f.split("/").at(-1)?.split(".")[0]?.includes("-") && !API_KEBAB_LEFT.has(f));
    expect(kebab, `kebab-case file names in api/ (rename to camelCase):\n${kebab.join("\n")}`).toEqual([]);
  });
});
