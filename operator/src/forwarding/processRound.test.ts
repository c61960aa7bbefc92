// The processes' round with real gateways (two, one of them with two workers) read on their status ports,
// and a recording stand-in for the control plane's internal client. Finding the replicas as pods on a real
// apiserver is operator/src/bed/gateway-replicas.test.ts.
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aStandaloneGateway, get } from "../gateway/gateway.test-support.ts";
import type { ServingGateway } from "../gateway/serving.ts";
import { recordingInternal } from "../testing/stub-control-plane.test-support.ts";
import { gatewayTargets } from "./gatewayReplicas.ts";
import { ProcessMetricsRound } from "./processRound.ts";

const noKube = {
  json: async () => {
    throw new Error("not asked: no gateway pods configured");
  },
};

const aGateway = (workers: number) => aStandaloneGateway("clu_f", workers);

/** The operator's own text and these gateways' status URLs, in one round (no pod discovery). */
const roundOver = (internal: ReturnType<typeof recordingInternal>, gatewayUrls: string[], timeoutMs: number) =>
  new ProcessMetricsRound({
    clusterId: "clu_f",
    internal,
    kube: noKube,
    own: async () => "berth_operator_leader 1\n",
    gatewayUrls,
    intervalMs: 60_000,
    timeoutMs,
    log: pino({ level: "silent" }),
  });

describe("which gateway pods are scraped", () => {
  const pod = (name: string, phase: string, ip: string | undefined, port = 9464, portName = "status") => ({
    metadata: { name },
    spec: {
      containers: [
        {
          ports: [
            { name: "https", containerPort: 8443 },
            { name: portName, containerPort: port },
          ],
        },
      ],
    },
    status: { phase, ...(ip ? { podIP: ip } : {}) },
  });

  it("takes running pods with an address, at the named port, sorted by name", () => {
    expect(
      gatewayTargets(
        [
          pod("gw-b", "Running", "10.0.0.2"),
          pod("gw-a", "Running", "10.0.0.1", 9999),
          pod("gw-pending", "Pending", undefined),
          pod("gw-done", "Succeeded", "10.0.0.3"),
          pod("gw-noport", "Running", "10.0.0.4", 9464, "other"),
          pod("gw-v6", "Running", "fd00::5"),
        ],
        "status",
      ),
    ).toEqual([
      { instance: "gw-a", url: "http://10.0.0.1:9999/metrics" },
      { instance: "gw-b", url: "http://10.0.0.2:9464/metrics" },
      { instance: "gw-v6", url: "http://[fd00::5]:9464/metrics" },
    ]);
  });

  it("takes a port number as it is", () => {
    expect(gatewayTargets([pod("gw", "Running", "10.0.0.1", 1, "x")], 9100)).toEqual([
      { instance: "gw", url: "http://10.0.0.1:9100/metrics" },
    ]);
  });
});

describe("a round of the processes' figures", () => {
  let one: ServingGateway;
  let two: ServingGateway;
  beforeAll(async () => {
    [one, two] = await Promise.all([aGateway(2), aGateway(1)]);
  });
  afterAll(async () => {
    await Promise.all([one?.close(), two?.close()]);
  });

  it("sends the operator's own text and each gateway's, its workers merged, labelled by replica", async () => {
    await Promise.all(Array.from({ length: 12 }, () => get(`${one.url}/healthz`)));
    await Promise.all(Array.from({ length: 5 }, () => get(`${two.url}/healthz`)));
    const internal = recordingInternal();
    const round = roundOver(internal, [`${one.statusUrl}/metrics`, `${two.statusUrl}/metrics`], 2000);
    const r = await round.round();
    expect(r).toMatchObject({ result: "ok", discovery: "off" });
    const sources = internal.sent[0]?.sources ?? [];
    expect(sources.map((s) => [s.job, s.instance])).toEqual([
      ["berth-operator", undefined],
      ["gateway", new URL(one.statusUrl as string).host],
      ["gateway", new URL(two.statusUrl as string).host],
    ]);
    expect(sources[1]?.text).toMatch(/berth_gateway_requests_total\{code="2xx"\} 12\n/);
    expect(sources[2]?.text).toMatch(/berth_gateway_requests_total\{code="2xx"\} 5\n/);
  });

  it("goes on without a replica whose status port does not answer, and says which", async () => {
    const dead = createServer().listen(0, "127.0.0.1");
    await once(dead, "listening");
    const port = (dead.address() as AddressInfo).port;
    dead.close();
    const internal = recordingInternal();
    const round = roundOver(internal, [`http://127.0.0.1:${port}/metrics`, `${two.statusUrl}/metrics`], 1000);
    const r = await round.round();
    expect(r.gateways).toEqual([
      { instance: `127.0.0.1:${port}`, ok: false },
      { instance: new URL(two.statusUrl as string).host, ok: true },
    ]);
    expect(internal.sent[0]?.sources.map((s) => s.job)).toEqual(["berth-operator", "gateway"]);
  });

  it("sends the operator's figures when the gateway's pods cannot be listed", async () => {
    const internal = recordingInternal();
    const round = new ProcessMetricsRound({
      clusterId: "clu_f",
      internal,
      kube: {
        json: async () => {
          throw new Error("connect ECONNREFUSED");
        },
      },
      own: async () => "berth_operator_leader 1\n",
      gatewayPods: { namespace: "berth-system", selector: "app=gw", port: "status" },
      intervalMs: 60_000,
      timeoutMs: 1000,
      log: pino({ level: "silent" }),
    });
    expect(await round.round()).toEqual({ result: "ok", gateways: [], discovery: "failed" });
    expect(internal.sent[0]?.sources.map((s) => s.job)).toEqual(["berth-operator"]);
  });
});
