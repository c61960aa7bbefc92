import { describe, expect, it } from "vitest";
import { GatewayConfigError, gatewayConfigFromEnv, parseCookieKeys, parseUpstreamTable } from "./config.ts";

const base = {
  BERTH_GATEWAY_CLUSTER_ID: "clu_a",
  BERTH_GATEWAY_CONTROL_PLANE_URL: "http://127.0.0.1:8081",
  BERTH_GATEWAY_TOKEN_FILE: "/run/token",
};

describe("gateway configuration", () => {
  it("defaults to plain HTTP on 8443 and the operator's table of session pods", () => {
    const c = gatewayConfigFromEnv(base);
    expect(c.port).toBe(8443);
    expect(c.tls).toEqual({ mode: "none" });
    expect(c.upstream).toEqual({ mode: "routes", url: "http://berth-operator.berth-system.svc:8080/routes" });
    expect(gatewayConfigFromEnv({ ...base, BERTH_GATEWAY_ROUTES_URL: "http://10.0.0.5:8080/routes" }).upstream).toEqual(
      { mode: "routes", url: "http://10.0.0.5:8080/routes" },
    );
    expect(c.cookieTtlSeconds).toBe(600);
  });

  it("takes a self-signed certificate's names and a static upstream table (the local fleet)", () => {
    const c = gatewayConfigFromEnv({
      ...base,
      BERTH_GATEWAY_TLS_SELF_SIGNED_NAMES: "127.0.0.1, localhost",
      BERTH_GATEWAY_STATIC_UPSTREAMS: "*=127.0.0.1:7000",
    });
    expect(c.tls).toEqual({ mode: "self-signed", names: ["127.0.0.1", "localhost"] });
    expect(c.upstream).toEqual({ mode: "static", table: "*=127.0.0.1:7000" });
    expect(parseUpstreamTable("s-a=10.0.0.1:80,*=127.0.0.1:7000")).toEqual({
      "s-a": "10.0.0.1:80",
      "*": "127.0.0.1:7000",
    });
  });

  it("reports every problem at once, by variable name", () => {
    try {
      gatewayConfigFromEnv({ BERTH_GATEWAY_CLUSTER_ID: "nope", BERTH_GATEWAY_TLS_CERT_FILE: "/c" });
      throw new Error("expected a configuration error");
    } catch (e) {
      const problems = (e as GatewayConfigError).problems.join("\n");
      expect(problems).toContain("BERTH_GATEWAY_CLUSTER_ID");
      expect(problems).toContain("BERTH_GATEWAY_CONTROL_PLANE_URL");
      expect(problems).toContain("BERTH_GATEWAY_TOKEN_FILE");
      expect(problems).toContain("BERTH_GATEWAY_TLS_KEY_FILE");
    }
  });

  it("reads cookie keys in hex or base64 and refuses short ones", () => {
    expect(parseCookieKeys(`# current\n${"ab".repeat(32)}\n${Buffer.alloc(32, 1).toString("base64")}\n`)).toHaveLength(
      2,
    );
    expect(() => parseCookieKeys("abcd")).toThrow(GatewayConfigError);
  });
});
