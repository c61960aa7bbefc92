// The repository's import graph between files, read exactly: Node's own TypeScript stripper erases the
// types (keeping every position), es-module-lexer finds the imports that remain, and the statements the
// stripper blanked out are the type-only imports. Specifiers resolve like Node does for this repository:
// relative paths as written, `@berth/<workspace>[/<subpath>]` through that workspace's package.json
// `exports` (exact subpaths and `*` patterns). Anything else (node:, npm packages) is outside the graph.
// Not dpdm or madge: both parse with TypeScript's compiler API (createSourceFile), which the TypeScript 7
// package no longer ships.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { stripTypeScriptTypes } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import { init, parse } from "es-module-lexer";

export const WORKSPACES = ["crds", "controllers", "api", "operator", "console", "cdk8s", "e2e", "bench"] as const;
const ROOTS = [...WORKSPACES, "scripts"];
const SKIP = new Set(["node_modules", "dist", ".data", "generated", ".fuzz-venv"]);

export interface Edge {
  /** Files relative to the repository's root, with `/`. */
  from: string;
  to: string;
  specifier: string;
  typeOnly: boolean;
}

function sourceFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (SKIP.has(entry.name) || entry.name.startsWith(".")) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.(ts|mts)$/.test(entry.name) && !entry.name.endsWith(".d.ts")) out.push(path);
    }
  };
  for (const top of ROOTS) {
    try {
      if (statSync(join(root, top)).isDirectory()) walk(join(root, top));
    } catch {
      // a workspace folder that does not exist here has no files
    }
  }
  return out;
}

function exportsOf(root: string): Map<string, Map<string, string>> {
  const map = new Map<string, Map<string, string>>();
  for (const ws of WORKSPACES) {
    const pkg = JSON.parse(readFileSync(join(root, ws, "package.json"), "utf8")) as {
      name: string;
      exports?: Record<string, string>;
    };
    const subpaths = new Map<string, string>();
    for (const [key, target] of Object.entries(pkg.exports ?? {})) {
      if (typeof target === "string") subpaths.set(key, resolve(root, ws, target));
    }
    map.set(pkg.name, subpaths);
  }
  return map;
}

/** A subpath's file: an exact key, or a pattern key with one `*` (`./test-ids/*`) filled into its target. */
export function subpathTarget(subpaths: Map<string, string> | undefined, subpath: string): string | undefined {
  const exact = subpaths?.get(subpath);
  if (exact !== undefined) return exact;
  for (const [key, target] of subpaths ?? []) {
    const [head, tail, ...more] = key.split("*");
    if (head === undefined || tail === undefined || more.length > 0) continue;
    if (subpath.length > key.length - 1 && subpath.startsWith(head) && subpath.endsWith(tail)) {
      return target.replace("*", subpath.slice(head.length, subpath.length - tail.length));
    }
  }
  return undefined;
}

const TYPE_ONLY = /\b(?:import|export)\s+type\s[^;]*?\bfrom\s*(["'])([^"']+)\1/g;

/** Every import between the repository's own files; an import the graph cannot resolve is an error. */
export async function importGraph(root: string): Promise<{ files: string[]; edges: Edge[]; unresolved: string[] }> {
  await init;
  const pkgs = exportsOf(root);
  const files = sourceFiles(root);
  const known = new Set(files);
  const rel = (p: string) => relative(root, p).split(sep).join("/");
  const edges: Edge[] = [];
  const unresolved: string[] = [];
  const target = (from: string, specifier: string): string | undefined => {
    if (specifier.startsWith(".")) return resolve(dirname(from), specifier);
    const m = /^(@berth\/[^/]+)(\/.*)?$/.exec(specifier);
    if (!m?.[1]) return undefined;
    const found = subpathTarget(pkgs.get(m[1]), `.${m[2] ?? ""}`);
    if (!found) unresolved.push(`${rel(from)}: ${specifier} (no such export)`);
    return found;
  };
  const add = (from: string, specifier: string, typeOnly: boolean) => {
    const to = target(from, specifier);
    if (to === undefined) return;
    if (!known.has(to)) {
      if (/\.(ts|mts)$/.test(to)) unresolved.push(`${rel(from)}: ${specifier} (no such file)`);
      return; // JSON, HTML and other assets are leaves
    }
    edges.push({ from: rel(from), to: rel(to), specifier, typeOnly });
  };
  for (const file of files) {
    const source = readFileSync(file, "utf8");
    const stripped = stripTypeScriptTypes(source, { mode: "strip" });
    const [imports] = parse(stripped, file);
    for (const i of imports) if (i.n !== undefined) add(file, i.n, false);
    // A type-only statement is what the stripper blanked: the same text inside a string or comment stays.
    for (const m of source.matchAll(TYPE_ONLY)) {
      if (m[2] && stripped[m.index] === " ") add(file, m[2], true);
    }
  }
  return { files: files.map(rel), edges, unresolved };
}

/** The files' workspace (or `scripts`). */
export function workspaceOf(file: string): string {
  return file.split("/")[0] ?? "";
}

/**
 * Files that import each other in a loop: one entry per strongly connected component, with its files and
 * one shortest loop through them (every elementary cycle would be too many to list).
 */
export function cycles(edges: Edge[]): { loop: string[]; files: string[] }[] {
  const next = new Map<string, string[]>();
  for (const e of edges) {
    const list = next.get(e.from) ?? [];
    if (!list.includes(e.to)) list.push(e.to);
    next.set(e.from, list);
  }
  // Tarjan's strongly connected components, iteratively (the graph is deep enough to matter).
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  for (const start of next.keys()) {
    if (idx.has(start)) continue;
    const work: [string, number][] = [[start, 0]];
    idx.set(start, index);
    low.set(start, index++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1] as [string, number];
      const [v, i] = frame;
      const succ = next.get(v) ?? [];
      if (i < succ.length) {
        frame[1] = i + 1;
        const w = succ[i] as string;
        if (!idx.has(w)) {
          idx.set(w, index);
          low.set(w, index++);
          stack.push(w);
          onStack.add(w);
          work.push([w, 0]);
        } else if (onStack.has(w)) {
          low.set(v, Math.min(low.get(v) ?? 0, idx.get(w) ?? 0));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent[0], Math.min(low.get(parent[0]) ?? 0, low.get(v) ?? 0));
      if (low.get(v) === idx.get(v)) {
        const component: string[] = [];
        let w: string | undefined;
        do {
          w = stack.pop();
          if (w === undefined) break;
          onStack.delete(w);
          component.push(w);
        } while (w !== v);
        if (component.length > 1 || (next.get(v) ?? []).includes(v)) components.push(component);
      }
    }
  }
  // Name each component by one shortest loop through its first file (breadth-first inside the component).
  return components.map((component) => {
    const inside = new Set(component);
    const first = component.toSorted()[0] as string;
    const from = new Map<string, string>();
    const queue = [first];
    const seen = new Set([first]);
    while (queue.length > 0) {
      const v = queue.shift() as string;
      for (const w of next.get(v) ?? []) {
        if (!inside.has(w)) continue;
        if (w === first) {
          const loop = [v];
          for (let p = from.get(v); p !== undefined; p = from.get(p)) loop.unshift(p);
          return { loop: [...loop, first], files: component.toSorted() };
        }
        if (!seen.has(w)) {
          seen.add(w);
          from.set(w, v);
          queue.push(w);
        }
      }
    }
    return { loop: component, files: component.toSorted() };
  });
}
