import { describe, expect, it } from "vitest";
import { ConfigError } from "../config.ts";
import { parseWorkerConfig } from "./config.ts";

const DB = "postgres://berth:berth@127.0.0.1:5432/berth";
/** What a worker in a pod has: its database, and the cluster's service (client-node's in-cluster config). */
const IN_POD = {
  DATABASE_URL: DB,
  KUBERNETES_SERVICE_HOST: "10.96.0.1",
  BERTH_WEBHOOK_SECRET_KEYS: `k1:${Buffer.alloc(32, 3).toString("base64")}`,
};

describe("parseWorkerConfig", () => {
  it("defaults to production lease timings and the API's namespaces", () => {
    const c = parseWorkerConfig(IN_POD);
    expect(c.lease).toEqual({ durationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 });
    expect(c.systemNamespace).toBe("berth-system");
    expect(c.sessionsNamespace).toBe("berth-sessions");
    expect(c.identity).toBeUndefined();
    expect(c.status).toEqual({ host: "0.0.0.0", port: 8082 });
    expect(String(c.database.url)).toBe("[redacted]");
    expect(c.database.queryTimeoutMs).toBe(30_000);
  });

  it("takes the identity from BERTH_WORKER_IDENTITY, else the pod's name", () => {
    expect(parseWorkerConfig({ ...IN_POD, POD_NAME: "worker-7f9" }).identity).toBe("worker-7f9");
    expect(parseWorkerConfig({ ...IN_POD, POD_NAME: "p", BERTH_WORKER_IDENTITY: "w" }).identity).toBe("w");
  });

  it("lists every problem at once, lease timings that could overlap two leaders included", () => {
    let err: unknown;
    try {
      parseWorkerConfig({ BERTH_LOG_LEVEL: "loud", BERTH_WORKER_MAX_SOCKETS: "0" });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems.join("\n")).toMatch(/DATABASE_URL[\s\S]*BERTH_LOG_LEVEL[\s\S]*MAX_SOCKETS/);
    expect(() =>
      parseWorkerConfig({
        ...IN_POD,
        BERTH_WORKER_LEASE_DURATION_MS: "3000",
        BERTH_WORKER_LEASE_RENEW_DEADLINE_MS: "3000",
      }),
    ).toThrow(/RENEW_DEADLINE_MS: must be less than/);
    // With another variable wrong as well, both are reported.
    try {
      parseWorkerConfig({ BERTH_WORKER_LEASE_DURATION_MS: "3000", BERTH_WORKER_LEASE_RENEW_DEADLINE_MS: "3000" });
      expect.unreachable();
    } catch (e) {
      expect((e as ConfigError).problems.join("\n")).toMatch(/DATABASE_URL[\s\S]*RENEW_DEADLINE_MS: must be less than/);
    }
  });
});

describe("parseWorkerConfig refuses a worker that could not reach its cluster", () => {
  const problemsOf = (env: Record<string, string>): string => {
    try {
      parseWorkerConfig(env);
    } catch (e) {
      return (e as ConfigError).problems.join("\n");
    }
    return "";
  };

  it("names a kubeconfig that is not there, a namespace that cannot be one, and no cluster at all", () => {
    expect(problemsOf({ DATABASE_URL: DB, BERTH_KUBECONFIG: "/nonexistent/worker.kubeconfig" })).toMatch(
      /BERTH_KUBECONFIG: no such file/,
    );
    expect(problemsOf({ ...IN_POD, BERTH_SESSIONS_NAMESPACE: "Not_A_Namespace" })).toMatch(
      /BERTH_SESSIONS_NAMESPACE: must be a DNS label/,
    );
    // Outside a pod, with no kubeconfig anywhere: client-node would settle for http://localhost:8080.
    expect(problemsOf({ DATABASE_URL: DB, HOME: "/nonexistent" })).toMatch(/BERTH_KUBECONFIG: required outside/);
    expect(problemsOf({ ...IN_POD, KUBERNETES_SERVICE_HOST: "", KUBECONFIG: "/etc/k.yaml" })).toBe("");
  });
});
