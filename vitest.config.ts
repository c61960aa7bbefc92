import { defineConfig } from "vitest/config";

// The files that run a real node (e2e/src/testbed/real-node): its CNI makes bridges, veths and addresses on
// the host, and Chromium drops every navigation in flight when the host's network changes
// (net::ERR_NETWORK_CHANGED, seen in a browser journey running beside them). They run as a group of their
// own, after every other file, so no browser is open while a node comes or goes.
const REAL_NODE_FILES = [
  "e2e/src/real/**/*.test.ts",
  "e2e/src/builds/**/*.test.ts",
  "e2e/src/testbed/real-node.test.ts",
  "e2e/src/testbed/csi-hostpath.real-node.test.ts",
  "e2e/src/testbed/a-pod-on-the-real-node-reaches-its-apiserver.real-node.test.ts",
  "e2e/src/start/npm-start-runs-a-real-jupyterlab.test.ts",
];
// The real-node files whose node runs kube-proxy or kube-router: those chains and ipsets are the host's, so
// one such node runs at a time (e2e/src/testbed/real-node/kube-router.ts refuses a second). They run one
// after another, as a last group.
const HOST_CHAIN_FILES = [
  "e2e/src/testbed/services-on-the-real-node.real-node.test.ts",
  "e2e/src/testbed/network-policy-on-the-real-node.real-node.test.ts",
  "e2e/src/testbed/berth-isolation-on-the-real-node.real-node.test.ts",
  "e2e/src/install/**/*.real-node.test.ts",
];
// The soak's CI-sized run (docs/dev/soak.md) runs only when asked (`npm run test:soak`): it adds 25
// minutes of both cores, and two passing runs are too few to gate every `npm test` on it.
const SOAK_FILES = process.env.BERTH_SOAK === "1" ? [] : ["bench/src/soak.test.ts"];
const ALL_FILES = ["{crds,controllers,api,operator,console,cdk8s,e2e,bench}/src/**/*.test.ts", "scripts/**/*.test.ts"];
const EXCLUDED = ["**/node_modules/**", "**/dist/**"];

// One run covers every workspace. Integration tests start their own clusters and databases in
// beforeAll (see e2e/src/testbed and api/src/db/db.test-support.ts); the limits below are for those starts.
export default defineConfig({
  test: {
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 240_000,
    teardownTimeout: 60_000,
    // expect.poll waits for real processes (a browser, the API, clusters) on a shared machine: its default
    // second is too short under load, and waiting longer costs only a test that fails anyway.
    expect: { poll: { timeout: 10_000 } },
    globalSetup: ["./scripts/vitest-global-setup.ts"],
    projects: [
      {
        extends: true,
        test: {
          name: "berth",
          include: ALL_FILES,
          exclude: [...EXCLUDED, ...REAL_NODE_FILES, ...HOST_CHAIN_FILES, ...SOAK_FILES],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: "real-node", include: REAL_NODE_FILES, exclude: EXCLUDED, sequence: { groupOrder: 1 } },
      },
      {
        extends: true,
        test: {
          name: "real-node-host",
          include: HOST_CHAIN_FILES,
          exclude: EXCLUDED,
          fileParallelism: false,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
