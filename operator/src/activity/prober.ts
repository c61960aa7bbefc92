// The operator's share of the idle rule's signals (docs/dev/idle-and-limits.md): every `intervalMs`
// (30 s) while it leads, for each running session pod, its GPU utilisation now (the latest reading of
// gpu/dcgm.ts: per container where HAMi's monitor gives it, else the pod's cards from DCGM) and what its
// notebook server says (Jupyter Server's /api/kernels and /api/terminals: any kernel busy or starting,
// and the latest kernel or terminal activity), sent to POST /internal/v1/sessions/activity. A pod whose
// notebook server does not answer is reported "unreachable" (the control plane then never pauses it for
// idleness); a terminal or code-editor session has no notebook server ("none"). The report is also the
// operator's heartbeat for these signals. The session pods admit the operator on their `http` port (the
// sessions namespace's NetworkPolicy); the servers run without a token behind the gateway.
import { type KubeApi, PeriodicPass } from "@berth/controllers/kube";
import { LABELS, sessionIdOf } from "@berth/crds";
import type { ActivityReport } from "@berth/crds/internal-plane";
import type { InternalClient } from "../controlplane/client.ts";

export interface NotebookReading {
  state: "ok" | "none" | "unreachable";
  busy: boolean;
  last_activity: string | null;
}

interface JupyterItem {
  execution_state?: string;
  last_activity?: string;
}

/** Asks a Jupyter Server at `base` (…/proxy/{cr}) for its kernels and terminals. Never throws. */
export async function probeNotebook(base: string, timeoutMs: number): Promise<NotebookReading> {
  try {
    const get = async (path: string): Promise<JupyterItem[]> => {
      const res = await fetch(`${base}${path}`, {
        signal: AbortSignal.timeout(timeoutMs),
        headers: { accept: "application/json" },
      });
      if (!res.ok) throw new Error(`${path}: ${res.status}`);
      const body = (await res.json()) as unknown;
      if (!Array.isArray(body)) throw new Error(`${path}: not a list`);
      return body as JupyterItem[];
    };
    const [kernels, terminals] = await Promise.all([get("/api/kernels"), get("/api/terminals")]);
    const times = [...kernels, ...terminals]
      .map((x) => (x.last_activity ? Date.parse(x.last_activity) : Number.NaN))
      .filter((t) => Number.isFinite(t));
    return {
      state: "ok",
      busy: kernels.some((k) => k.execution_state === "busy" || k.execution_state === "starting"),
      last_activity: times.length > 0 ? new Date(Math.max(...times)).toISOString() : null,
    };
  } catch {
    return { state: "unreachable", busy: false, last_activity: null };
  }
}

export interface ActivityProberOptions {
  kube: KubeApi;
  client: Pick<InternalClient, "call">;
  clusterId: string;
  namespace: string;
  /** Where a session's application answers: host:port for `cr`. */
  upstream(cr: string): { host: string; port: number } | undefined;
  /** The pod's latest GPU utilisation, if a reading is fresh. */
  gpu?: (pod: { namespace: string; name: string }) => number | undefined;
  intervalMs?: number;
  probeTimeoutMs?: number;
  clock?: { now(): number };
  onReport?: (ok: boolean, message?: string) => void;
}

interface PodItem {
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; deletionTimestamp?: string };
  status?: { phase?: string };
}

export class ActivityProber {
  readonly #o: ActivityProberOptions;
  readonly #loop: PeriodicPass;

  constructor(o: ActivityProberOptions) {
    this.#o = o;
    this.#loop = new PeriodicPass({
      intervalMs: o.intervalMs ?? 30_000,
      pass: () => this.probe(),
      onError: (e) => o.onReport?.(false, (e as Error).message),
      unref: true,
    });
  }

  start(): void {
    this.#loop.start();
  }

  /** One round: every running session pod read, one report sent. */
  async probe(): Promise<void> {
    const o = this.#o;
    const res = await o.kube.request<{ items: PodItem[] }>(
      "GET",
      `/api/v1/namespaces/${o.namespace}/pods?labelSelector=${encodeURIComponent(`${LABELS.name}=berth-session`)}`,
    );
    if (res.status !== 200) throw new Error(`listing session pods: ${res.status}`);
    const observedAt = new Date(o.clock?.now() ?? Date.now()).toISOString();
    const pods = res.body.items.filter((p) => p.status?.phase === "Running" && !p.metadata.deletionTimestamp);
    const sessions = await Promise.all(
      pods.map(async (p) => {
        const labels = p.metadata.labels ?? {};
        const cr = labels[LABELS.session] ?? p.metadata.name;
        const session = labels[LABELS.sessionId] ?? sessionIdOf(cr);
        const up = o.upstream(cr);
        const notebook: NotebookReading =
          labels[LABELS.component] !== undefined && labels[LABELS.component] !== "jupyterlab"
            ? { state: "none", busy: false, last_activity: null }
            : up
              ? await probeNotebook(`http://${up.host}:${up.port}/proxy/${cr}`, o.probeTimeoutMs ?? 5_000)
              : { state: "unreachable", busy: false, last_activity: null };
        const util = o.gpu?.({ namespace: p.metadata.namespace ?? o.namespace, name: p.metadata.name });
        return { session, gpu_utilization: util ?? null, notebook };
      }),
    );
    const r = await o.client.call("POST", "/internal/v1/sessions/activity", {
      cluster_id: o.clusterId,
      source: "operator",
      observed_at: observedAt,
      sessions,
    } satisfies ActivityReport);
    o.onReport?.(r.ok, r.ok ? undefined : r.message);
  }

  async stop(): Promise<void> {
    await this.#loop.stop();
  }
}
