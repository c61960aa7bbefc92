// Which of the leader's parts this operator runs, from its configuration alone (leader-work.ts starts
// them): pure, so a configuration's consequences are read in one place.
import type { OperatorConfig } from "./config.ts";

export interface LeaderPlan {
  /** Where GPU figures are scraped (DCGM exporters, HAMi's monitor); none: no scraper. */
  gpuUrls: string[];
  /** Each GPU scrape goes on to the control plane's metrics server. */
  forwardGpuMetrics: boolean;
  /** The operator's and the gateways' own figures go on too (one sender per cluster). */
  processMetrics: boolean;
  /** The idle rule's GPU and notebook signals are probed. */
  activity: boolean;
  /** The namespace where image builds run; absent: this cluster builds nothing. */
  buildsNamespace?: string;
}

export function planLeaderWork(config: OperatorConfig): LeaderPlan {
  const gm = config.gpuMetrics;
  return {
    gpuUrls: [...(gm.url ? [gm.url] : []), ...gm.urls, ...(gm.hamiUrl ? [gm.hamiUrl] : [])],
    forwardGpuMetrics: gm.forward,
    processMetrics: gm.forward,
    activity: config.activity.intervalMs > 0,
    ...(config.builds.namespace ? { buildsNamespace: config.builds.namespace } : {}),
  };
}
