// docs/deploy.md's blocks marked `sh tested`, run as written, in order, with kubectl against the test
// bed's kube-apiservers: contexts `berth-mgmt` and `berth-gpu-east` in a kubeconfig made for the run.
// The API does not run here; DATABASE_URL, OPERATOR_TOKEN and ADMIN_TOKEN are dummies (the doc says so).
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type Fleet, KubeHttp, startFleet } from "@berth/e2e";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DOC = join(ROOT, "docs/deploy.md");

/** The `sh tested` blocks of the doc, with the heading they are under. */
export function testedBlocks(markdown: string): { heading: string; script: string }[] {
  const out: { heading: string; script: string }[] = [];
  let heading = "";
  const re = /^(#{1,3} .*)$|^```sh tested\n([\s\S]*?)^```$/gm;
  for (const m of markdown.matchAll(re)) {
    if (m[1]) heading = m[1].replace(/^#+ /, "");
    else if (m[2]) out.push({ heading, script: m[2] });
  }
  return out;
}

const blocks = testedBlocks(readFileSync(DOC, "utf8"));
const run = promisify(execFile);

let fleet: Fleet;
let dir: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  fleet = await startFleet({
    clusters: [
      { name: "mgmt", kind: "management" },
      { name: "gpu-east", kind: "gpu" },
    ],
  });
  dir = mkdtempSync(join(tmpdir(), "berth-deploy-doc-"));
  const contexts = [
    ["berth-mgmt", fleet.cluster("mgmt")],
    ["berth-gpu-east", fleet.cluster("gpu-east")],
  ] as const;
  const kubeconfig = join(dir, "kubeconfig");
  writeFileSync(
    kubeconfig,
    stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: contexts.map(([name, c]) => ({
        name,
        cluster: { server: c.server, "certificate-authority-data": Buffer.from(c.caPem).toString("base64") },
      })),
      users: contexts.map(([name, c]) => ({ name, user: { token: c.adminToken } })),
      contexts: contexts.map(([name]) => ({ name, context: { cluster: name, user: name } })),
      "current-context": "berth-mgmt",
    }),
    { mode: 0o600 },
  );
  env = {
    PATH: process.env.PATH,
    HOME: dir,
    KUBECONFIG: kubeconfig,
    DATABASE_URL: "postgres://berth:dummy@db.example.com:5432/berth",
    OPERATOR_TOKEN: "dummy-operator-token",
    ADMIN_TOKEN: "dummy-admin-token",
  };
});

afterAll(async () => {
  await fleet?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("docs/deploy.md on the bed", () => {
  it("has tested blocks for install, upgrade, rotation and uninstall", () => {
    expect(new Set(blocks.map((b) => b.heading))).toEqual(new Set(["Install", "Upgrade", "Rotate", "Uninstall"]));
  });

  it.each(blocks.map((b, i) => [i + 1, b.heading, b.script] as const))("block %i (%s) runs", async (_, __, script) => {
    const r = await run("bash", ["-euo", "pipefail", "-c", script], { cwd: ROOT, env, timeout: 180_000 }).catch(
      (e: { stdout: string; stderr: string; code: number }) => e,
    );
    expect("code" in r ? r.code : 0, `${script}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`).toBe(0);
  });

  it("leaves nothing of the uninstalled manifests", async () => {
    const kubeOf = (name: string) => {
      const c = fleet.cluster(name);
      return new KubeHttp({ server: c.server, caPem: c.caPem, token: c.adminToken });
    };
    const [gpu, mgmt] = [kubeOf("gpu-east"), kubeOf("mgmt")];
    try {
      // Uninstall removed the namespaces with everything in them (or is finishing to).
      for (const [kube, name] of [
        [gpu, "berth-sessions"],
        [gpu, "berth-system"],
        [mgmt, "berth-system"],
      ] as const) {
        const ns = await kube.raw<{ status: { phase: string } }>("GET", `/api/v1/namespaces/${name}`);
        if (ns.status !== 404) expect(ns.body.status.phase, name).toBe("Terminating");
      }
      const crd = await mgmt.raw("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/sessions.berth.dev");
      expect(crd.status).toBe(404);
    } finally {
      gpu.close();
      mgmt.close();
    }
  });
});
