// The map (docs/dev/architecture.md) is checked against the tree: every path it names exists, and its
// folder list names every folder (the top level, each workspace's own folders and those of its src/)
// and no folder that is gone.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");
const MAP = "docs/dev/architecture.md";
const WORKSPACES = ["crds", "controllers", "api", "operator", "console", "cdk8s", "e2e", "bench"];

const tracked = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], { cwd: root })
  .toString()
  .split("\n")
  .filter((f) => f && existsSync(join(root, f)));
const folders = new Set(
  tracked.flatMap((f) =>
    f
      .split("/")
      .slice(0, -1)
      .map((_, i, p) => p.slice(0, i + 1).join("/")),
  ),
);

/** The folders the map must list: top level, each workspace's own, and each of its src/. */
function foldersToList(): string[] {
  const depth = (f: string) => f.split("/").length;
  return [...folders]
    .filter((f) => {
      const [top, second] = f.split("/");
      if (depth(f) === 1) return true;
      if (!WORKSPACES.includes(top as string) && top !== "docs") return false;
      return depth(f) === 2 || (depth(f) === 3 && second === "src");
    })
    .sort();
}

const text = readFileSync(join(root, MAP), "utf8");
const ticked = [...text.matchAll(/`([^`\s]+)`/g)].map((m) => m[1] as string);

/** A path-like token: has a slash or a file extension, no placeholder, not a URL path or a flag. */
const pathLike = (t: string) =>
  /[/]|\.(ts|md|json|yaml|sh)$/.test(t) &&
  !/[<>*{}:=]/.test(t) &&
  !t.startsWith("/") &&
  !t.startsWith("@") &&
  !t.startsWith("-") &&
  !t.includes("…");

describe("the map of the repository (docs/dev/architecture.md)", () => {
  it("names only paths that exist (a named path is the end of some file's or folder's path)", () => {
    const all = [...tracked, ...folders];
    const missing = ticked
      .filter(pathLike)
      .map((t) => t.replace(/\/$/, ""))
      .filter((t) => !all.some((p) => p === t || p.endsWith(`/${t}`)));
    expect([...new Set(missing)], `paths the map names that are not in the tree:\n${missing.join("\n")}`).toEqual([]);
  });

  it("lists every folder in its folder list, and no folder that is gone", () => {
    const section = text.slice(text.indexOf("## Every folder"));
    expect(section.length, "the map has a section '## Every folder'").toBeGreaterThan(20);
    const listed = [...section.matchAll(/^\| `([^`]+)\/` \|/gm)].map((m) => m[1] as string).sort();
    const expected = foldersToList();
    expect(
      expected.filter((f) => !listed.includes(f)),
      "folders missing from the map's list",
    ).toEqual([]);
    expect(
      listed.filter((f) => !expected.includes(f)),
      "folders the map lists that are not in the tree",
    ).toEqual([]);
  });
});
