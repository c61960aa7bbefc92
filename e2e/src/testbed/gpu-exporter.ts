// A stand-in for one GPU node's exporters on loopback: NVIDIA's DCGM exporter families and HAMi's
// per-container families, in the Prometheus text format, with values the test drives. Real ones publish
// the same names and labels (dcgm-exporter's default counters; HAMi's device-plugin monitor), so the
// operator's forwarder and the API's relay cannot tell the difference.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface ExporterCard {
  uuid: string;
  node: string;
  model: string;
  memoryMiB: number;
}

export interface CardValues {
  util?: number;
  memUsedMiB?: number;
  powerW?: number;
  tempC?: number;
  /** The last XID error seen on the card (0: none), as DCGM_FI_DEV_XID_ERRORS reports it. */
  xid?: number;
}

export interface ContainerRef {
  pod: string;
  namespace: string;
  container: string;
  uuid: string;
}

export interface RunningGpuExporter {
  /** The metrics URL, e.g. http://127.0.0.1:40123/metrics */
  url: string;
  setCard(uuid: string, values: CardValues): void;
  /** A container holding (a share of) a card: DCGM labels the card with it; HAMi publishes its share. */
  setContainer(ref: ContainerRef, values: { util: number; memUsedMiB: number }): void;
  /** Forgets a container (its pod went away). */
  removeContainer(ref: Pick<ContainerRef, "pod" | "namespace">): void;
  stop(): Promise<void>;
}

const esc = (v: string): string => v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
const labels = (l: Record<string, string>): string =>
  `{${Object.entries(l)
    .map(([k, v]) => `${k}="${esc(v)}"`)
    .join(",")}}`;

const DCGM: [name: string, help: string, pick: (c: Required<CardValues>, card: ExporterCard) => number][] = [
  ["DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", (v) => v.util],
  ["DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", (v) => v.memUsedMiB],
  ["DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", (v, c) => Math.max(0, c.memoryMiB - v.memUsedMiB)],
  ["DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", (v) => v.powerW],
  ["DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", (v) => v.tempC],
  ["DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.", (v) => v.xid],
];

export async function startGpuExporter(opts: { cards: readonly ExporterCard[] }): Promise<RunningGpuExporter> {
  const cards = opts.cards.map((c) => ({ ...c }));
  const values = new Map<string, Required<CardValues>>(
    cards.map((c) => [c.uuid, { util: 0, memUsedMiB: 0, powerW: 60, tempC: 35, xid: 0 }]),
  );
  const containers = new Map<string, { ref: ContainerRef; util: number; memUsedMiB: number }>();

  const render = (): string => {
    const out: string[] = [];
    for (const [name, help, pick] of DCGM) {
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`);
      cards.forEach((card, i) => {
        const v = values.get(card.uuid) as Required<CardValues>;
        // dcgm-exporter names the pod holding the whole card (from the kubelet's pod-resources API).
        const holder = [...containers.values()].find((c) => c.ref.uuid === card.uuid)?.ref;
        const l: Record<string, string> = {
          gpu: String(i),
          UUID: card.uuid,
          device: `nvidia${i}`,
          modelName: card.model,
          Hostname: card.node,
          ...(holder ? { container: holder.container, namespace: holder.namespace, pod: holder.pod } : {}),
        };
        out.push(`${name}${labels(l)} ${pick(v, card)}`);
      });
    }
    const hami: [string, string, (c: { util: number; memUsedMiB: number }) => number][] = [
      ["Device_utilization_desc_of_container", "Container device utilization description", (c) => c.util],
      ["vGPU_device_memory_usage_in_bytes", "vGPU device usage", (c) => c.memUsedMiB * 1024 * 1024],
    ];
    for (const [name, help, pick] of hami) {
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`);
      for (const c of containers.values()) {
        const card = cards.find((x) => x.uuid === c.ref.uuid);
        out.push(
          `${name}${labels({
            podnamespace: c.ref.namespace,
            podname: c.ref.pod,
            ctrname: c.ref.container,
            vdeviceid: String(card ? cards.indexOf(card) : 0),
            deviceuuid: c.ref.uuid,
          })} ${pick(c)}`,
        );
      }
    }
    return `${out.join("\n")}\n`;
  };

  const server = createServer((req, res) => {
    if (req.url !== "/metrics") {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "Content-Type": "text/plain; version=0.0.4; charset=utf-8" }).end(render());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/metrics`,
    setCard(uuid, v) {
      const cur = values.get(uuid);
      if (!cur) throw new Error(`no card ${uuid} on this exporter`);
      values.set(uuid, { ...cur, ...Object.fromEntries(Object.entries(v).filter(([, x]) => x !== undefined)) });
    },
    setContainer(ref, v) {
      if (!values.has(ref.uuid)) throw new Error(`no card ${ref.uuid} on this exporter`);
      containers.set(`${ref.namespace}/${ref.pod}/${ref.container}/${ref.uuid}`, { ref, ...v });
    },
    removeContainer(ref) {
      for (const [k, c] of containers)
        if (c.ref.pod === ref.pod && c.ref.namespace === ref.namespace) containers.delete(k);
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
