// A stand-in for NVIDIA's DCGM exporter: a real HTTP server on loopback answering GET /metrics in the
// Prometheus text format, with the two series the operator reads per GPU (DCGM_FI_DEV_GPU_UTIL,
// DCGM_FI_DEV_FB_USED) and the labels the exporter puts on them (gpu, UUID, device, modelName, Hostname,
// and pod/namespace/container for a GPU held by a pod). Tests set what each GPU shows; `close()` is the
// exporter down; `failWith(status)` an exporter that answers but not with metrics.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface StubGpu {
  /** The pod holding the GPU; none: a free GPU (the exporter leaves pod labels empty). */
  pod?: { namespace: string; name: string; container?: string };
  utilization: number;
  memoryMib: number;
  /** Name the pod `exported_pod` / `exported_namespace`, as a Prometheus that renamed the labels does. */
  exportedLabels?: boolean;
}

export interface StubDcgmExporter {
  /** The metrics URL (…/metrics). */
  readonly url: string;
  /** What the GPUs show from the next scrape on. */
  setGpus(gpus: StubGpu[]): void;
  /** Answer every scrape with this status until cleared. */
  failWith(status: number | undefined): void;
  /** Scrapes answered so far. */
  readonly scrapes: number;
  close(): Promise<void>;
}

export function dcgmExposition(gpus: StubGpu[]): string {
  const lines: string[] = [];
  const series = (metric: string, help: string, value: (g: StubGpu) => number) => {
    lines.push(`# HELP ${metric} ${help}`, `# TYPE ${metric} gauge`);
    gpus.forEach((g, i) => {
      const p = g.pod;
      const podLabels = p
        ? g.exportedLabels
          ? `,exported_container="${p.container ?? "main"}",exported_namespace="${p.namespace}",exported_pod="${p.name}",namespace="gpu-operator",pod="nvidia-dcgm-exporter-abcde"`
          : `,container="${p.container ?? "main"}",namespace="${p.namespace}",pod="${p.name}"`
        : `,container="",namespace="",pod=""`;
      lines.push(
        `${metric}{gpu="${i}",UUID="GPU-0000000${i}-stub",device="nvidia${i}",modelName="NVIDIA H100 80GB HBM3",Hostname="node-1",DCGM_FI_DRIVER_VERSION="550.54.15"${podLabels}} ${value(g)}`,
      );
    });
  };
  series("DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", () => 1980);
  series("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", (g) => g.utilization);
  series("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", (g) => 81_559 - g.memoryMib);
  series("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", (g) => g.memoryMib);
  return `${lines.join("\n")}\n`;
}

export async function startStubDcgmExporter(opts: { gpus?: StubGpu[] } = {}): Promise<StubDcgmExporter> {
  let gpus = opts.gpus ?? [];
  let failing: number | undefined;
  let scrapes = 0;
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.url !== "/metrics") return void res.writeHead(404).end();
    scrapes++;
    if (failing !== undefined) return void res.writeHead(failing, { "content-type": "text/plain" }).end("failing\n");
    res.writeHead(200, { "content-type": "text/plain; version=0.0.4" }).end(dcgmExposition(gpus));
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/metrics`,
    setGpus: (g) => {
      gpus = g;
    },
    failWith: (s) => {
      failing = s;
    },
    get scrapes() {
      return scrapes;
    },
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      })),
  };
}
