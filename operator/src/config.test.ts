import { describe, expect, it } from "vitest";
import { ConfigError, configFromEnv } from "./config.ts";

const minimal = {
  BERTH_OPERATOR_CLUSTER_ID: "clu_abc123",
  BERTH_OPERATOR_KUBECONFIG: "/etc/berth/kubeconfig",
  BERTH_OPERATOR_CONTROL_PLANE_URL: "http://127.0.0.1:8081",
  BERTH_OPERATOR_TOKEN_FILE: "/var/run/berth/token",
};

describe("configFromEnv", () => {
  it("fills every default from four variables and an identity", () => {
    const c = configFromEnv(minimal, "operator-0");
    expect(c).toMatchObject({
      clusterId: "clu_abc123",
      kube: { mode: "kubeconfig", path: "/etc/berth/kubeconfig" },
      http: { host: "0.0.0.0", port: 8080 },
      lease: { namespace: "berth-system", name: "berth-operator", identity: "operator-0", durationMs: 15_000 },
      inventory: { debounceMs: 500, resyncMs: 60_000 },
    });
  });

  it("runs image builds only when a builds namespace is given", () => {
    expect(configFromEnv(minimal, "op").builds.namespace).toBeUndefined();
    expect(configFromEnv({ ...minimal, BERTH_OPERATOR_BUILDS_NAMESPACE: "berth-builds" }, "op").builds).toEqual({
      namespace: "berth-builds",
    });
  });

  it("places builds on the nodes BERTH_OPERATOR_BUILDS_NODE_SELECTOR names, and refuses a malformed one", () => {
    const env = { ...minimal, BERTH_OPERATOR_BUILDS_NAMESPACE: "berth-builds" };
    expect(
      configFromEnv({ ...env, BERTH_OPERATOR_BUILDS_NODE_SELECTOR: "berth.dev/real-node=true,pool=build" }, "op").builds
        .nodeSelector,
    ).toEqual({ "berth.dev/real-node": "true", pool: "build" });
    expect(() => configFromEnv({ ...env, BERTH_OPERATOR_BUILDS_NODE_SELECTOR: "no-value" }, "op")).toThrow(
      /BERTH_OPERATOR_BUILDS_NODE_SELECTOR: must be key=value pairs/,
    );
  });

  it("reads GPU metrics from a DCGM exporter only when its URL is given", () => {
    expect(configFromEnv(minimal, "op").gpuMetrics.url).toBeUndefined();
    const c = configFromEnv(
      {
        ...minimal,
        BERTH_OPERATOR_GPU_METRICS_URL: "http://nvidia-dcgm-exporter.gpu-operator:9400/metrics",
        BERTH_OPERATOR_GPU_METRICS_INTERVAL_MS: "30000",
      },
      "op",
    );
    expect(c.gpuMetrics).toEqual({
      url: "http://nvidia-dcgm-exporter.gpu-operator:9400/metrics",
      intervalMs: 30_000,
      timeoutMs: 5_000,
      retentionMs: 3_600_000,
      urls: [],
      forward: true,
    });
    expect(() => configFromEnv({ ...minimal, BERTH_OPERATOR_GPU_METRICS_URL: "dcgm:9400" }, "op")).toThrow(
      /BERTH_OPERATOR_GPU_METRICS_URL/,
    );
  });

  it("reads one exporter per node as a comma-separated list, and forwarding can be turned off", () => {
    const c = configFromEnv(
      {
        ...minimal,
        BERTH_OPERATOR_GPU_METRICS_URLS: "http://10.0.0.1:9400/metrics, http://10.0.0.2:9400/metrics",
        BERTH_OPERATOR_GPU_METRICS_FORWARD: "false",
      },
      "op",
    );
    expect(c.gpuMetrics.urls).toEqual(["http://10.0.0.1:9400/metrics", "http://10.0.0.2:9400/metrics"]);
    expect(c.gpuMetrics.forward).toBe(false);
    expect(() => configFromEnv({ ...minimal, BERTH_OPERATOR_GPU_METRICS_URLS: "x:1" }, "op")).toThrow(
      /BERTH_OPERATOR_GPU_METRICS_URLS/,
    );
  });

  it("finds the gateway's replicas by label and port name unless told otherwise", () => {
    expect(configFromEnv(minimal, "op").processMetrics).toEqual({
      gatewayNamespace: "berth-system",
      gatewaySelector: "app.kubernetes.io/name=berth-gateway",
      gatewayPort: "status",
      gatewayUrls: [],
      intervalMs: 15_000,
      timeoutMs: 5_000,
    });
    const c = configFromEnv(
      {
        ...minimal,
        BERTH_OPERATOR_GATEWAY_NAMESPACE: "edge",
        BERTH_OPERATOR_GATEWAY_SELECTOR: "none",
        BERTH_OPERATOR_GATEWAY_STATUS_PORT: "9464",
        BERTH_OPERATOR_GATEWAY_METRICS_URLS: "http://127.0.0.1:9000/metrics",
        BERTH_OPERATOR_METRICS_INTERVAL_MS: "5000",
      },
      "op",
    );
    expect(c.processMetrics).toMatchObject({
      gatewayNamespace: "edge",
      gatewaySelector: "",
      gatewayPort: 9464,
      gatewayUrls: ["http://127.0.0.1:9000/metrics"],
      intervalMs: 5000,
    });
    expect(() => configFromEnv({ ...minimal, BERTH_OPERATOR_GATEWAY_STATUS_PORT: "Status Port" }, "op")).toThrow(
      /BERTH_OPERATOR_GATEWAY_STATUS_PORT/,
    );
  });

  it("reads the private addresses sessions may reach as a comma-separated list of CIDRs", () => {
    expect(configFromEnv(minimal, "op").sessions.egressAllow).toEqual([]);
    const c = configFromEnv({ ...minimal, BERTH_OPERATOR_SESSION_EGRESS_ALLOW: " 10.20.0.0/16, fd00:1::/64 ," }, "op");
    expect(c.sessions.egressAllow).toEqual(["10.20.0.0/16", "fd00:1::/64"]);
    let error: unknown;
    try {
      configFromEnv({ ...minimal, BERTH_OPERATOR_SESSION_EGRESS_ALLOW: "10.20.0.0/16,mirror.local" }, "op");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems.join("\n")).toContain("BERTH_OPERATOR_SESSION_EGRESS_ALLOW");
  });

  it("runs in-cluster when no kubeconfig is given", () => {
    const { BERTH_OPERATOR_KUBECONFIG: _, ...rest } = minimal;
    const c = configFromEnv({ ...rest, KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" }, "op");
    expect(c.kube).toEqual({ mode: "in-cluster", host: "10.96.0.1", port: "443" });
  });

  it("reports every problem at once, by variable name", () => {
    let error: unknown;
    try {
      configFromEnv({
        BERTH_OPERATOR_CLUSTER_ID: "cluster-1",
        BERTH_OPERATOR_CONTROL_PLANE_URL: "not a url",
        BERTH_OPERATOR_HTTP_PORT: "70000",
        BERTH_OPERATOR_LEASE_DURATION_MS: "1000",
        BERTH_OPERATOR_LEASE_RENEW_DEADLINE_MS: "2000",
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join("\n");
    for (const name of [
      "BERTH_OPERATOR_CLUSTER_ID",
      "BERTH_OPERATOR_CONTROL_PLANE_URL",
      "BERTH_OPERATOR_TOKEN_FILE",
      "BERTH_OPERATOR_HTTP_PORT",
      "BERTH_OPERATOR_IDENTITY",
      "KUBERNETES_SERVICE_HOST",
    ])
      expect(problems).toContain(name);
  });

  it("refuses a renew deadline that is not below the lease duration", () => {
    expect(() =>
      configFromEnv(
        { ...minimal, BERTH_OPERATOR_LEASE_DURATION_MS: "1000", BERTH_OPERATOR_LEASE_RENEW_DEADLINE_MS: "1000" },
        "op",
      ),
    ).toThrow(/BERTH_OPERATOR_LEASE_RENEW_DEADLINE_MS: must be below lease.durationMs/);
  });
});
