// GPU utilisation and memory per pod from NVIDIA's DCGM exporter (Prometheus text format), for the usage
// samples' optional `gpu_utilization` / `gpu_memory_mib` (controllers/src/mirror/usage.ts).
//
// - Scraped every `intervalMs` while this operator leads; each scrape is one reading per pod: the mean
//   DCGM_FI_DEV_GPU_UTIL (%) of the pod's GPUs and the sum of their DCGM_FI_DEV_FB_USED (MiB).
// - A sample's figures are the mean of the readings taken in its own span. Readings are kept for
//   `retentionMs`, so a batch retried after an outage still finds them (older ones: no figures).
// - The exporter names a GPU's pod with `pod` / `namespace` labels; behind a Prometheus that renamed its
//   own target labels (honor_labels: false) they are `exported_pod` / `exported_namespace`, which then win.
//   A GPU no pod holds has an empty or missing pod label and is skipped.
// - A failed scrape (down, timeout, not 200, unparsable) records nothing: samples of that span carry no
//   figures rather than zeros, and metering itself never waits on the exporter.
// - With a GPU sharing layer several pods share a card, and the card's utilisation says little about one
//   of them. HAMi's vGPU monitor publishes per-container figures (its current names
//   hami_container_device_utilization_ratio / hami_vgpu_memory_used_bytes with labels namespace, pod,
//   container, and the legacy Device_utilization_desc_of_container / vGPU_device_memory_usage_in_bytes
//   with podnamespace, podname, ctrname): when a pod has them they win over DCGM's per-card figures.
//   Scrape both endpoints (`urls`); either may be missing.
import type { GpuUsage, GpuUsageSource } from "@berth/controllers";
import { PeriodicPass } from "@berth/controllers/kube";

const UTIL = "DCGM_FI_DEV_GPU_UTIL";
const FB_USED = "DCGM_FI_DEV_FB_USED";
const CTR_UTIL = new Set(["hami_container_device_utilization_ratio", "Device_utilization_desc_of_container"]);
const CTR_MEM_BYTES = new Set(["hami_vgpu_memory_used_bytes", "vGPU_device_memory_usage_in_bytes"]);
/** Names whose presence says the answer is a GPU exporter's (DCGM or HAMi's monitor). */
const KNOWN = [UTIL, FB_USED, ...CTR_UTIL, ...CTR_MEM_BYTES];

/** One pod's GPUs at one scrape. */
export interface PodGpuReading {
  namespace: string;
  pod: string;
  /** Mean utilisation of the pod's GPUs that reported it, 0–100 %. */
  utilization?: number;
  /** Framebuffer memory used, summed over the pod's GPUs, MiB. */
  memoryMib?: number;
}

const DECIMAL = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"/g;
const unescapeLabel = (v: string): string => v.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));

/** Parses an exposition into one reading per pod (only GPUs held by a pod; a container's figures win). */
export function parseDcgm(text: string): PodGpuReading[] {
  const pods = new Map<string, { namespace: string; pod: string; util: number[]; mem: number[] }>();
  const ctr = new Map<string, { namespace: string; pod: string; util: number[]; mem: number[] }>();
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0];
    const container = name !== undefined && (CTR_UTIL.has(name) || CTR_MEM_BYTES.has(name));
    if (name !== UTIL && name !== FB_USED && !container) continue;
    let rest = line.slice(name.length).trimStart();
    const labels: Record<string, string> = {};
    if (rest.startsWith("{")) {
      const close = closingBrace(rest);
      if (close < 0) continue;
      for (const m of rest.slice(1, close).matchAll(LABEL)) labels[m[1] as string] = unescapeLabel(m[2] as string);
      rest = rest.slice(close + 1);
    }
    // Only a decimal value: Number() would read an empty one as 0 (an idle GPU nobody saw) and "0x10" as 16.
    const token = rest.trim().split(/\s+/)[0] ?? "";
    if (!DECIMAL.test(token)) continue;
    const value = Number(token);
    if (container) {
      const cpod = labels.pod || labels.podname;
      const cns = labels.pod ? labels.namespace : labels.podnamespace;
      if (!cpod || !cns) continue;
      const c = ctr.get(`${cns}/${cpod}`) ?? { namespace: cns, pod: cpod, util: [], mem: [] };
      ctr.set(`${cns}/${cpod}`, c);
      if (CTR_UTIL.has(name)) c.util.push(value);
      else c.mem.push(value / 1_048_576);
      continue;
    }
    const pod = labels.exported_pod || labels.pod;
    const namespace = labels.exported_pod ? labels.exported_namespace : labels.namespace;
    if (!pod || !namespace) continue;
    const key = `${namespace}/${pod}`;
    const p = pods.get(key) ?? { namespace, pod, util: [], mem: [] };
    pods.set(key, p);
    (name === UTIL ? p.util : p.mem).push(value);
  }
  // A pod's container figures replace its cards' (per series: a monitor without memory keeps DCGM's).
  for (const [key, c] of ctr) {
    const p = pods.get(key) ?? { namespace: c.namespace, pod: c.pod, util: [], mem: [] };
    if (c.util.length > 0) p.util = c.util;
    if (c.mem.length > 0) p.mem = [c.mem.reduce((a, b) => a + b, 0)];
    pods.set(key, p);
  }
  return [...pods.values()].map((p) => ({
    namespace: p.namespace,
    pod: p.pod,
    ...(p.util.length > 0 ? { utilization: p.util.reduce((a, b) => a + b, 0) / p.util.length } : {}),
    ...(p.mem.length > 0 ? { memoryMib: p.mem.reduce((a, b) => a + b, 0) } : {}),
  }));
}

/** Index of the `}` closing the label set that `s` starts with, quotes and escapes respected; -1 if none. */
function closingBrace(s: string): number {
  let quoted = false;
  for (let i = 1; i < s.length; i++) {
    const c = s[i];
    if (quoted) {
      if (c === "\\") i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === "}") return i;
  }
  return -1;
}

interface Reading {
  at: number;
  utilization?: number;
  memoryMib?: number;
}

/** Readings per pod over time; answers a pod's averages over a span. */
export class GpuReadings implements GpuUsageSource {
  readonly #byPod = new Map<string, Reading[]>();
  readonly #retentionMs: number;

  constructor(opts: { retentionMs: number }) {
    this.#retentionMs = opts.retentionMs;
  }

  /** One scrape's readings, taken at `atMs`; forgets what is older than the retention. */
  record(atMs: number, readings: PodGpuReading[]): void {
    for (const r of readings) {
      const key = `${r.namespace}/${r.pod}`;
      const list = this.#byPod.get(key) ?? [];
      this.#byPod.set(key, list);
      list.push({
        at: atMs,
        ...(r.utilization !== undefined ? { utilization: r.utilization } : {}),
        ...(r.memoryMib !== undefined ? { memoryMib: r.memoryMib } : {}),
      });
    }
    const oldest = atMs - this.#retentionMs;
    for (const [key, list] of this.#byPod) {
      let drop = 0;
      while (drop < list.length && (list[drop] as Reading).at < oldest) drop++;
      if (drop === list.length) this.#byPod.delete(key);
      else if (drop > 0) list.splice(0, drop);
    }
  }

  usage(pod: { namespace: string; name: string }, fromMs: number, toMs: number): GpuUsage | undefined {
    const list = this.#byPod.get(`${pod.namespace}/${pod.name}`);
    if (!list) return undefined;
    let util = 0;
    let nUtil = 0;
    let mem = 0;
    let nMem = 0;
    for (const r of list) {
      if (r.at < fromMs || r.at >= toMs) continue;
      if (r.utilization !== undefined) {
        util += r.utilization;
        nUtil++;
      }
      if (r.memoryMib !== undefined) {
        mem += r.memoryMib;
        nMem++;
      }
    }
    if (nUtil === 0 && nMem === 0) return undefined;
    return {
      ...(nUtil > 0 ? { utilization: util / nUtil } : {}),
      ...(nMem > 0 ? { memoryMib: mem / nMem } : {}),
    };
  }

  /** The pod's newest utilisation reading taken at or after `sinceMs`. */
  latest(pod: { namespace: string; name: string }, sinceMs: number): number | undefined {
    const list = this.#byPod.get(`${pod.namespace}/${pod.name}`) ?? [];
    for (let i = list.length - 1; i >= 0; i--) {
      const r = list[i] as Reading;
      if (r.at < sinceMs) return undefined;
      if (r.utilization !== undefined) return r.utilization;
    }
    return undefined;
  }

  /** Pods with readings (metrics, tests). */
  get pods(): number {
    return this.#byPod.size;
  }
}

export interface DcgmScraperOptions {
  /**
   * The exporters' metrics URLs: DCGM's (e.g. http://dcgm-exporter.gpu-operator:9400/metrics, one per node)
   * and HAMi's vGPU monitor (e.g. http://hami-device-plugin-monitor.kube-system:31992/metrics).
   */
  urls: readonly string[];
  intervalMs: number;
  timeoutMs: number;
  retentionMs: number;
  now: () => number;
  /** Each scrape's outcome: `ok`, an HTTP status, `network`, `timeout` or `parse` (no DCGM metric in it). */
  onScrape?: (result: string, err?: unknown) => void;
  /** The texts of one round's successful scrapes (the forwarder sends them on, gpu/forward.ts). */
  onTexts?: (texts: string[]) => void;
}

/** Scrapes the exporter on a timer into `readings`; `usage()` is what usage metering asks. */
export class DcgmScraper implements GpuUsageSource {
  readonly readings: GpuReadings;
  readonly #o: DcgmScraperOptions;
  readonly #loop: PeriodicPass;
  #abort = new AbortController();
  /** Set by stop(): a scrape answered after it records nothing. */
  #stopped = false;

  constructor(o: DcgmScraperOptions) {
    this.#o = o;
    this.readings = new GpuReadings({ retentionMs: o.retentionMs });
    this.#loop = new PeriodicPass({
      intervalMs: o.intervalMs,
      pass: () => this.scrape(),
      // scrape() never throws: each exporter's failure goes to onScrape.
      onError: (err) => o.onScrape?.("error", err),
      unref: true,
    });
  }

  usage(pod: { namespace: string; name: string }, fromMs: number, toMs: number): GpuUsage | undefined {
    return this.readings.usage(pod, fromMs, toMs);
  }

  /** Scrapes at once, then every interval (a slow scrape delays the next, never overlaps it). */
  start(): void {
    this.#loop.start();
  }

  /** One round: every exporter at once; records the readings of those that answered. Never throws. */
  async scrape(): Promise<void> {
    const at = this.#o.now();
    const texts = await Promise.all(this.#o.urls.map((url) => this.#scrapeOne(url)));
    const ok = texts.filter((t): t is string => t !== undefined);
    if (this.#stopped || ok.length === 0) return;
    // Parsed together: a pod's container figures (HAMi's monitor) win over its cards' (DCGM's).
    this.readings.record(at, parseDcgm(ok.join("\n")));
    this.#o.onTexts?.(ok);
  }

  async #scrapeOne(url: string): Promise<string | undefined> {
    let result = "ok";
    let error: unknown;
    let text: string | undefined;
    try {
      const signal = AbortSignal.any([this.#abort.signal, AbortSignal.timeout(this.#o.timeoutMs)]);
      const res = await fetch(url, { signal, headers: { accept: "text/plain" } });
      if (!res.ok) {
        result = String(res.status);
        await res.body?.cancel();
      } else {
        const body = await res.text();
        // A 200 without any GPU metric is not an exporter (a wrong URL): say so rather than "ok".
        if (!KNOWN.some((k) => body.includes(k))) result = "parse";
        else text = body;
      }
    } catch (e) {
      error = e;
      if (result === "ok") result = (e as Error)?.name === "TimeoutError" ? "timeout" : "network";
    }
    this.#o.onScrape?.(result, error);
    return text;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#abort.abort();
    await this.#loop.stop();
  }
}
