import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig, Secret } from "./config.ts";

const KEY = Buffer.alloc(32, 9).toString("base64");
const minimal = {
  DATABASE_URL: "postgres://u:p@db:5432/berth",
  BERTH_JWT_SECRET: "0123456789abcdef0123456789abcdef",
  BERTH_WEBHOOK_SECRET_KEYS: `k1:${KEY}`,
};

describe("configuration", () => {
  it("fills every default from a minimal environment", () => {
    const c = parseConfig(minimal);
    expect(c.api).toEqual({ host: "0.0.0.0", port: 8080, publicUrl: "http://127.0.0.1:8080" });
    expect(c.http).toEqual({ corsAllowOrigins: [], bodyLimitBytes: 1048576, validateResponses: true });
    expect(c.idempotency).toEqual({ retentionSeconds: 86_400, inFlightTimeoutSeconds: 300 });
    expect(c.internal).toMatchObject({ enabled: false, allowCidrs: [], port: 8081 });
    expect(c.auth.bootstrapEmail).toBe("admin@berth.local");
    expect(c.database.queryTimeoutMs).toBe(30_000);
    expect(parseConfig({ ...minimal, BERTH_DATABASE_QUERY_TIMEOUT_SECONDS: "5" }).database.queryTimeoutMs).toBe(5000);
  });

  it("talks to the cluster it runs in with its own ServiceAccount when no kubeconfig is given", () => {
    expect(parseConfig(minimal).kube).toEqual({});
    expect(parseConfig({ ...minimal, KUBERNETES_SERVICE_HOST: "10.96.0.1" }).kube).toEqual({ inCluster: true });
    const file = import.meta.filename; // any file that exists
    expect(parseConfig({ ...minimal, KUBERNETES_SERVICE_HOST: "10.96.0.1", BERTH_KUBECONFIG: file }).kube).toEqual({
      kubeconfigPath: file,
    });
  });

  it("reports every problem at once", () => {
    let err: unknown;
    try {
      parseConfig({
        BERTH_API_PORT: "http",
        BERTH_JWT_SECRET: "short",
        BERTH_INTERNAL_ALLOW_CIDRS: "10.0.0.0/8,everyone",
        BERTH_IDEMPOTENCY_RETENTION_HOURS: "1",
        BERTH_WEBHOOK_SECRET_KEYS: "k1:c2hvcnQ=",
        BERTH_DATABASE_QUERY_TIMEOUT_SECONDS: "0",
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const problems = (err as ConfigError).problems.join("\n");
    for (const name of [
      "DATABASE_URL",
      "BERTH_API_PORT",
      "BERTH_JWT_SECRET",
      "BERTH_INTERNAL_ALLOW_CIDRS",
      "BERTH_IDEMPOTENCY_RETENTION_HOURS",
      "BERTH_WEBHOOK_SECRET_KEYS",
      "BERTH_DATABASE_QUERY_TIMEOUT_SECONDS",
    ])
      expect(problems).toContain(name);
  });

  it("opens the internal plane only for configured networks", () => {
    const c = parseConfig({ ...minimal, BERTH_INTERNAL_ALLOW_CIDRS: "10.0.0.0/8, fd00::/8" });
    expect(c.internal).toMatchObject({ enabled: true, allowCidrs: ["10.0.0.0/8", "fd00::/8"] });
  });

  it("never prints a secret", () => {
    const c = parseConfig({ ...minimal, BERTH_BOOTSTRAP_PASSWORD: "correct horse battery" });
    const printed = [JSON.stringify(c), inspect(c, { depth: 10 }), String(c.auth.jwtSecret)].join("\n");
    expect(printed).not.toContain("0123456789abcdef");
    expect(printed).not.toContain(KEY);
    expect(printed).not.toContain("correct horse");
    expect(printed).not.toContain("u:p@db");
    expect(c.auth.jwtSecret).toBeInstanceOf(Secret);
    expect(c.auth.jwtSecret.reveal()).toBe(minimal.BERTH_JWT_SECRET);
  });

  it("treats empty variables as unset", () => {
    expect(parseConfig({ ...minimal, BERTH_API_PORT: "" }).api.port).toBe(8080);
  });
});
