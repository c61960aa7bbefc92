// No script a fresh clone runs may fail by timing. Under `pipefail`, a pipeline whose last reader leaves
// early (`grep -q`, `grep -m`, `head`) fails whenever the writer's next write meets the closed pipe: the
// bed build lost 2 of 10 etcd checks that way. Such output is read whole first (e2e/testbed/version-check.sh).
// Shell blocks in docs count too: cdk8s/src/deploy-doc.test.ts runs them under pipefail.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");
const EARLY_READER = /\|\s*(grep\s+(-[a-zA-Z]*[qm]|--quiet|--max-count)|head\b)/;

function shellFiles(): string[] {
  const files = execFileSync("git", ["ls-files"], { cwd: root }).toString().split("\n");
  return files.filter((f) => /\.(sh|md)$/.test(f) || f === ".ci/run");
}

/** Shell lines of a file: all of a script, the fenced sh/bash blocks of a markdown file. */
function shellLines(file: string): { line: number; text: string }[] {
  const lines = readFileSync(join(root, file), "utf8").split("\n");
  if (!file.endsWith(".md")) return lines.map((text, i) => ({ line: i + 1, text }));
  const out: { line: number; text: string }[] = [];
  let inShell = false;
  lines.forEach((text, i) => {
    if (/^```/.test(text)) inShell = !inShell && /^```(sh|bash|shell)\b/.test(text);
    else if (inShell) out.push({ line: i + 1, text });
  });
  return out;
}

describe("shell pipelines", () => {
  it("never end in a reader that leaves early (grep -q, grep -m, head)", () => {
    const found = shellFiles().flatMap((f) =>
      shellLines(f)
        .filter(({ text }) => !text.trimStart().startsWith("#") && EARLY_READER.test(text))
        .map(({ line, text }) => `${f}:${line}: ${text.trim()}`),
    );
    expect(found).toEqual([]);
  });
});
