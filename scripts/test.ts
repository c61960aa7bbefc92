// `npm test`: builds the test bed's binaries and the metrics server if needed (with progress), runs every test of every
// workspace with vitest, and ends with a plain `N passed, N failed[, N skipped]` line for CI. The
// repository's own checks are vitest tests too (scripts/*.test.ts: biome, the TypeScript compiler, package
// boundaries, import cycles), so they count in that line.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const build = spawnSync("bash", [join(root, "e2e/testbed/build-binaries.sh")], {
  stdio: ["ignore", "pipe", "inherit"],
});
if (build.status !== 0) {
  console.error("test bed binaries could not be built; see the messages above");
  process.exit(build.status ?? 1);
}
const bin = build.stdout.toString().trim().split("\n").at(-1) ?? "";
// The control plane's metrics server (docs/adr/0010-metrics-server.md): once here, not raced by test files.
const metrics = spawnSync("bash", [join(root, "e2e/testbed/build-metrics-server.sh")], {
  stdio: ["ignore", "pipe", "inherit"],
});
if (metrics.status !== 0) {
  console.error("the metrics server could not be built; see the messages above");
  process.exit(metrics.status ?? 1);
}
const metricsBin = metrics.stdout.toString().trim().split("\n").at(-1) ?? "";

// The session images (cdk8s/src/image/sessions.ts): a cold build is about 15 minutes of both cores. For a
// whole run it happens here, before any test file starts, so no test shares the machine with it (a test
// then finds the cache); where it cannot (not root, no debootstrap) the image tests say why themselves.
const whole = process.argv.length === 2;
const canBuildImages = process.getuid?.() === 0 && spawnSync("sh", ["-c", "command -v debootstrap"]).status === 0;
if (whole && canBuildImages) {
  const images = spawnSync(process.execPath, [join(root, "cdk8s/src/image/sessions.ts"), "build"], {
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (images.status !== 0) console.error("the session images could not be built; the tests that run them say why");
}

const outDir = mkdtempSync(join(tmpdir(), "berth-test-"));
const report = join(outDir, "report.json");
const child = spawn(
  process.execPath,
  [
    join(root, "node_modules/vitest/vitest.mjs"),
    "run",
    "--reporter=default",
    "--reporter=json",
    `--outputFile.json=${report}`,
    ...process.argv.slice(2),
  ],
  {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, BERTH_TESTBED_BIN: bin, BERTH_METRICS_SERVER_BIN: metricsBin },
  },
);
// Forward Ctrl-C so vitest's own teardown (and every test's cleanup) runs.
for (const sig of ["SIGINT", "SIGTERM"] as const) process.on(sig, () => child.kill(sig));
child.on("exit", (code, signal) => {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  try {
    const r = JSON.parse(readFileSync(report, "utf8"));
    passed = r.numPassedTests ?? 0;
    failed = r.numFailedTests ?? 0;
    // A file that fails before any test runs (an import error, a failing beforeAll) counts as one failure.
    for (const f of r.testResults ?? [])
      if (f.status === "failed" && !(f.assertionResults ?? []).some((a: { status: string }) => a.status === "failed"))
        failed++;
    skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  } catch {
    failed = Math.max(1, failed); // no report: the run itself broke
  }
  rmSync(outDir, { recursive: true, force: true });
  console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
  process.exit(code === 0 && failed === 0 ? 0 : code || 1);
  void signal;
});
