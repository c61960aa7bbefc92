import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadKubeConfig } from "./kubeconfig.ts";

const dir = mkdtempSync(join(tmpdir(), "berth-kubeconfig-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("loadKubeConfig", () => {
  it("in the cluster, talks to the service host over TLS with the service account's CA and token file", () => {
    const kc = loadKubeConfig({ mode: "in-cluster", host: "10.96.0.1", port: "443" }, "/sa");
    expect(kc.getCurrentCluster()).toMatchObject({ server: "https://10.96.0.1:443", caFile: "/sa/ca.crt" });
    expect(kc.getCurrentCluster()?.skipTLSVerify).toBe(false);
    expect(kc.getCurrentUser()?.authProvider).toEqual({ name: "tokenFile", config: { tokenFile: "/sa/token" } });
  });

  it("in the cluster, brackets an IPv6 service host", () => {
    const kc = loadKubeConfig({ mode: "in-cluster", host: "fd00:10:96::1", port: "443" });
    expect(kc.getCurrentCluster()?.server).toBe("https://[fd00:10:96::1]:443");
  });

  it("from a file, uses the context asked for", () => {
    const path = join(dir, "kubeconfig");
    const cluster = (name: string, server: string) => ({ name, cluster: { server } });
    writeFileSync(
      path,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [cluster("a", "https://a.example:6443"), cluster("b", "https://b.example:6443")],
        users: [{ name: "u", user: { token: "t" } }],
        contexts: [
          { name: "a", context: { cluster: "a", user: "u" } },
          { name: "b", context: { cluster: "b", user: "u" } },
        ],
        "current-context": "a",
      }),
    );
    expect(loadKubeConfig({ mode: "kubeconfig", path }).getCurrentCluster()?.server).toBe("https://a.example:6443");
    expect(loadKubeConfig({ mode: "kubeconfig", path, context: "b" }).getCurrentCluster()?.server).toBe(
      "https://b.example:6443",
    );
  });
});
