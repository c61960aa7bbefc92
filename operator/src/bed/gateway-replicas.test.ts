// The operator finds the session gateway's replicas as pods on a real GPU cluster of the test bed (with
// its least-privilege credential) and reads each one's status port on its own round, with no GPU exporter
// configured. The replicas are real gateways on loopback; their pods are host-network pods on a kwok node
// (address 127.0.0.1), each naming its gateway's status port, as a Deployment's pods name theirs.
import type { MetricsForward } from "@berth/crds/internal-plane";
import { type Bed, eventually, H100, SYSTEM_NS, startBed } from "@berth/e2e/operator-bed";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aStandaloneGateway, get } from "../gateway/gateway.test-support.ts";
import type { ServingGateway } from "../gateway/serving.ts";
import { type RunningOperator, startOperator } from "../operator.ts";
import { captureLog } from "../testing/log.test-support.ts";
import { type StubControlPlane, startStubControlPlane } from "../testing/stub-control-plane.test-support.ts";

let bed: Bed;
let stub: StubControlPlane;
let operator: RunningOperator | undefined;
const gateways: ServingGateway[] = [];
let a: ServingGateway | undefined;
let b: ServingGateway | undefined;
const logs = captureLog("debug", process.env.BERTH_TEST_ECHO_LOGS === "1");
const LABELS = { "app.kubernetes.io/name": "berth-gateway", "app.kubernetes.io/part-of": "berth" };

async function aGateway(): Promise<ServingGateway> {
  const g = await aStandaloneGateway("clu_bed", 2);
  gateways.push(g);
  return g;
}

/** A gateway replica's pod: on the kwok node, host network (its address is the node's), its status port named. */
async function aReplicaPod(name: string, statusPort: number): Promise<void> {
  const pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, labels: LABELS },
    spec: {
      nodeName: "h100-1",
      hostNetwork: true,
      automountServiceAccountToken: false,
      containers: [
        {
          name: "gateway",
          image: "berth",
          ports: [
            { name: "https", containerPort: 8443 },
            { name: "status", containerPort: statusPort },
          ],
        },
      ],
    },
  };
  // The namespace's default ServiceAccount (which admission asks for) comes from the controller manager.
  await eventually(
    () =>
      bed.admin.json("POST", `/api/v1/namespaces/${SYSTEM_NS}/pods`, pod).then(
        () => true,
        () => undefined,
      ),
    `pod ${name} created`,
  );
}

function metricsPosts(): MetricsForward[] {
  return stub.requests
    .filter((r) => r.method === "POST" && r.path === "/internal/v1/metrics" && r.status === 200)
    .map((r) => r.body as MetricsForward);
}

function gatewayCount(text: string | undefined): number | undefined {
  const m = /berth_gateway_requests_total\{code="2xx"\} (\d+)/.exec(text ?? "");
  return m ? Number(m[1]) : undefined;
}

beforeAll(async () => {
  bed = await startBed([{ name: "h100-1", gpuModel: H100, gpuCount: 8 }]);
  stub = await startStubControlPlane({ tokens: { "token-bed": "clu_bed" } });
  const base = bed.config({
    identity: "operator-0",
    tokenFile: bed.writeToken("token", "token-bed"),
    controlPlaneUrl: stub.url,
  });
  // No GPU exporter at all: the processes' round runs on its own.
  expect(base.gpuMetrics.url).toBeUndefined();
  expect(base.gpuMetrics.urls).toEqual([]);
  operator = await startOperator(
    { ...base, processMetrics: { ...base.processMetrics, intervalMs: 300, timeoutMs: 1000 } },
    { log: logs.log },
  );
});

afterAll(async () => {
  await operator?.stop();
  await Promise.all(gateways.map((g) => g.close()));
  await stub?.close();
  await bed?.stop();
});

describe("the gateway's replicas, scraped one by one", () => {
  it("sends the operator's own figures on a cluster with no GPU exporter", async () => {
    const post = await eventually(
      () => metricsPosts().find((p) => p.sources.some((s) => s.job === "berth-operator")),
      "a round with the operator's figures",
    );
    expect(post.cluster_id).toBe("clu_bed");
  });

  it("reads every replica's status port, each labelled by its pod", async () => {
    [a, b] = await Promise.all([aGateway(), aGateway()]);
    await aReplicaPod("berth-gateway-a", Number(new URL(a?.statusUrl as string).port));
    await aReplicaPod("berth-gateway-b", Number(new URL(b?.statusUrl as string).port));
    await Promise.all(Array.from({ length: 7 }, () => get(`${a?.url}/healthz`)));
    await Promise.all(Array.from({ length: 3 }, () => get(`${b?.url}/healthz`)));
    const post = await eventually(() => {
      const last = metricsPosts().at(-1);
      const of = (i: string) => last?.sources.find((s) => s.job === "gateway" && s.instance === i)?.text;
      return gatewayCount(of("berth-gateway-a")) === 7 && gatewayCount(of("berth-gateway-b")) === 3 ? last : undefined;
    }, "both replicas' counts in one round");
    expect(post.sources.map((s) => [s.job, s.instance])).toEqual([
      ["berth-operator", undefined],
      ["gateway", "berth-gateway-a"],
      ["gateway", "berth-gateway-b"],
    ]);
  });

  it("leaves a replica out once its pod is gone, and a replica that stops answering is a gap, not a stop", async () => {
    await bed.admin.json("DELETE", `/api/v1/namespaces/${SYSTEM_NS}/pods/berth-gateway-a?gracePeriodSeconds=0`);
    await b?.close();
    const post = await eventually(() => {
      const last = metricsPosts().at(-1);
      return last && !last.sources.some((s) => s.job === "gateway") ? last : undefined;
    }, "a round with neither replica");
    expect(post.sources.map((s) => s.job)).toEqual(["berth-operator"]);
    // Counted once the round is done (just after its post): b's pod is still there, its port is not.
    await eventually(async () => {
      const scrapes = await operator?.metrics.gatewayScrapes.get();
      return (scrapes?.values.find((v) => v.labels.result === "failed")?.value ?? 0) > 0 || undefined;
    }, "b's failed read counted");
  });
});
