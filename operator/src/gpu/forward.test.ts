// The forwarder's round with the session gateway's status port (a real gateway, two workers) and a
// recording stand-in for the control plane's internal client.
import { once } from "node:events";
import { mkdtemp, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { MetricsForward } from "@berth/crds/internal-plane";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { gatewayConfigFromEnv } from "../gateway/config.ts";
import { get } from "../gateway/gateway.test-support.ts";
import { runGateway } from "../gateway/run.ts";
import { forwardMetrics } from "./forward.ts";

function recorder() {
  const sent: MetricsForward[] = [];
  return {
    sent,
    call: async (_m: string, _p: string, body?: unknown) => {
      sent.push(body as MetricsForward);
      return { ok: true as const, status: 204, body: undefined };
    },
  };
}

describe("forwarding a round with the gateway's figures", () => {
  it("sends the gateway's merged counters as job gateway, beside the GPU texts and its own", async () => {
    const dir = await mkdtemp(join(tmpdir(), "berth-fwd-"));
    await writeFile(join(dir, "token"), "t\n");
    const g = await runGateway(
      gatewayConfigFromEnv({
        BERTH_GATEWAY_CLUSTER_ID: "clu_f",
        BERTH_GATEWAY_CONTROL_PLANE_URL: "http://127.0.0.1:9",
        BERTH_GATEWAY_TOKEN_FILE: join(dir, "token"),
        BERTH_GATEWAY_HOST: "127.0.0.1",
        BERTH_GATEWAY_PORT: "0",
        BERTH_GATEWAY_STATUS_HOST: "127.0.0.1",
        BERTH_GATEWAY_STATUS_PORT: "0",
        BERTH_GATEWAY_STATIC_UPSTREAMS: "*=127.0.0.1:9",
        BERTH_GATEWAY_LOG_LEVEL: "silent",
      }),
      { workers: 2 },
    );
    try {
      await Promise.all(Array.from({ length: 12 }, () => get(`${g.url}/healthz`)));
      const own = new Registry();
      const internal = recorder();
      const result = await forwardMetrics(
        internal as never,
        "clu_f",
        ["gpu_text 1\n"],
        { registry: own },
        {
          gatewayUrl: `${g.statusUrl}/metrics`,
        },
      );
      expect(result).toBe("ok");
      const sources = internal.sent[0]?.sources ?? [];
      expect(sources.map((s) => s.job)).toEqual(["gpu-exporter", "berth-operator", "gateway"]);
      expect(sources[2]?.text).toMatch(/berth_gateway_requests_total\{code="2xx"\} 12\n/);
    } finally {
      await g.close();
    }
  });

  it("goes on without the gateway when its status port does not answer", async () => {
    const dead = createServer().listen(0, "127.0.0.1");
    await once(dead, "listening");
    const port = (dead.address() as AddressInfo).port;
    dead.close();
    const internal = recorder();
    const result = await forwardMetrics(
      internal as never,
      "clu_f",
      ["gpu_text 1\n"],
      { registry: new Registry() },
      {
        gatewayUrl: `http://127.0.0.1:${port}/metrics`,
        timeoutMs: 1000,
      },
    );
    expect(result).toBe("ok");
    expect(internal.sent[0]?.sources.map((s) => s.job)).toEqual(["gpu-exporter", "berth-operator"]);
  });
});
