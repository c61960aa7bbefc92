// Lint and type-check are part of `npm test`: each is one test, so the closing `N passed, N failed` line
// counts them and a failure prints the tool's own report.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");

function run(bin: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, "node_modules", bin), ...args], { cwd: root });
    let output = "";
    child.stdout.on("data", (b: Buffer) => {
      output += b.toString();
    });
    child.stderr.on("data", (b: Buffer) => {
      output += b.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

// Both walk the whole repository; on a shared two-core machine that can take minutes.
describe("the repository", { timeout: 300_000 }, () => {
  it("passes biome's check with no error", async () => {
    const { code, output } = await run("@biomejs/biome/bin/biome", ["check", ".", "--max-diagnostics=100"]);
    expect(code, output).toBe(0);
  });

  it("passes the TypeScript compiler's check", async () => {
    const { code, output } = await run("typescript/bin/tsc", ["-p", "tsconfig.json", "--noEmit"]);
    expect(code, output).toBe(0);
  });
});
