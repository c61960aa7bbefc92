// The round of Berth's own processes in this cluster, on its own timer and independent of GPU exporters
// (a cluster without any still sends these): the operator's exposition and every gateway replica's, each
// replica read on its own status port (its workers already merged there, gateway/metrics.ts) and sent
// with its pod's name as `instance`. A replica that does not answer in time is a gap in its own series;
// the round goes on without it. Nothing is retried: the next round is 15 s away.
import { type KubeApi, PeriodicPass } from "@berth/controllers/kube";
import type { MetricsForward } from "@berth/crds/internal-plane";
import type { Logger } from "pino";
import type { InternalClient } from "../controlplane/client.ts";
import { findGatewayReplicas, type GatewayPods, type GatewayTarget } from "./gatewayReplicas.ts";

export interface ProcessRoundOptions {
  clusterId: string;
  internal: Pick<InternalClient, "call">;
  kube: Pick<KubeApi, "json">;
  /** The operator's own exposition. */
  own: () => Promise<string>;
  /** Where the gateway's pods are; absent: no pods are looked for. */
  gatewayPods?: GatewayPods | undefined;
  /** A gateway status URL read as well (a gateway not run as pods of this cluster, e.g. the local fleet). */
  gatewayUrls?: readonly string[];
  intervalMs: number;
  timeoutMs: number;
  log: Logger;
  /** Each round's outcome (the operator counts them). */
  onRound?: (r: RoundResult) => void;
}

export interface RoundResult {
  /** ok, an HTTP status, or a transport failure kind (as InternalClient answers). */
  result: string;
  /** Every replica tried, by instance, and whether it answered. */
  gateways: { instance: string; ok: boolean }[];
  /** Finding the pods failed (the Kubernetes API did not answer): the round went with the operator only. */
  discovery: "ok" | "failed" | "off";
}

export class ProcessMetricsRound {
  readonly #o: ProcessRoundOptions;
  readonly #loop: PeriodicPass;

  constructor(o: ProcessRoundOptions) {
    this.#o = o;
    this.#loop = new PeriodicPass({
      intervalMs: o.intervalMs,
      pass: async () => o.onRound?.(await this.round()),
      onError: (e) => o.log.warn({ err: (e as Error).message }, "metrics round failed"),
    });
  }

  start(): void {
    this.#loop.start();
  }

  async stop(): Promise<void> {
    await this.#loop.stop();
  }

  async round(): Promise<RoundResult> {
    const o = this.#o;
    let discovery: RoundResult["discovery"] = o.gatewayPods ? "ok" : "off";
    const found: GatewayTarget[] = o.gatewayPods
      ? await findGatewayReplicas(o.kube, o.gatewayPods).catch((e: unknown) => {
          discovery = "failed";
          o.log.debug({ err: (e as Error).message }, "listing the gateway's pods failed");
          return [];
        })
      : [];
    const targets = [...found, ...(o.gatewayUrls ?? []).map((url) => ({ instance: new URL(url).host, url }))];
    const [own, ...texts] = await Promise.all([
      o.own().catch(() => ""),
      ...targets.map((t) => readText(t.url, o.timeoutMs)),
    ]);
    const sources: MetricsForward["sources"] = own ? [{ job: "berth-operator", text: own }] : [];
    targets.forEach((t, i) => {
      const text = texts[i];
      if (text) sources.push({ job: "gateway", instance: t.instance, text });
    });
    const gateways = targets.map((t, i) => ({ instance: t.instance, ok: Boolean(texts[i]) }));
    if (sources.length === 0) return { result: "empty", gateways, discovery };
    const r = await o.internal.call("POST", "/internal/v1/metrics", {
      cluster_id: o.clusterId,
      sources,
    } satisfies MetricsForward);
    return { result: r.ok ? "ok" : String(r.status), gateways, discovery };
  }
}

/** The text at `url`, or "" when it cannot be read in time. */
export async function readText(url: string, timeoutMs: number): Promise<string> {
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    if (!r.ok) {
      await r.body?.cancel();
      return "";
    }
    return await r.text();
  } catch {
    return "";
  }
}
