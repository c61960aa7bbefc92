import { defineConfig } from "vitest/config";

// One run covers every workspace. Integration tests start their own clusters and databases in
// beforeAll (see e2e/src/testbed and api/src/db/db.test-support.ts); the limits below are for those starts.
export default defineConfig({
  test: {
    include: ["{crds,controllers,api,operator,console,cdk8s,e2e,bench}/src/**/*.test.ts", "scripts/**/*.test.ts"],
    exclude: ["**/node_modules/**", "**/dist/**"],
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 240_000,
    teardownTimeout: 60_000,
    // expect.poll waits for real processes (a browser, the API, clusters) on a shared machine: its default
    // second is too short under load, and waiting longer costs only a test that fails anyway.
    expect: { poll: { timeout: 10_000 } },
    globalSetup: ["./scripts/vitest-global-setup.ts"],
  },
});
