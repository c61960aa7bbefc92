// A stand-in GPU metrics source on loopback for the bed, driven by the test: one HTTP server answering in
// the Prometheus text format what a GPU node's exporters publish.
//   GET /metrics        both families below (one scrape target for the operator)
//   GET /dcgm/metrics   NVIDIA's DCGM exporter: DCGM_FI_DEV_GPU_UTIL, _FB_USED, _FB_FREE, _POWER_USAGE,
//                       _GPU_TEMP, _XID_ERRORS per card, labelled gpu, UUID, device, modelName, Hostname,
//                       the counters DCGM_FI_DEV_ECC_DBE_VOL_TOTAL (double-bit ECC errors) and
//                       DCGM_EXP_XID_ERRORS_COUNT (one series per XID code seen, label `xid`), which a test
//                       raises with raiseXid and raiseEcc,
//                       and pod/namespace/container for each pod that uses the card (one series per pod, as
//                       the exporter's pod mapping does on a shared card; empty pod labels for a free card)
//   GET /hami/metrics   HAMi's vGPU monitor: per container hami_container_device_utilization_ratio and
//                       hami_vgpu_memory_used_bytes (namespace, pod, container, vdevice_index, device_uuid),
//                       the legacy Device_utilization_desc_of_container and vGPU_device_memory_usage_in_bytes
//                       (podnamespace, podname, ctrname, vdeviceid, deviceuuid), and per card
//                       hami_host_gpu_utilization_ratio / HostCoreUtilization
// Nothing is made up between calls: a card or container shows exactly what the test last set.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface GpuCard {
  uuid: string;
  node: string;
  model: string;
  memoryMiB: number;
}

export interface CardReading {
  util: number;
  memUsedMiB: number;
  powerW: number;
  tempC: number;
  xid: number;
}

export interface ContainerRef {
  pod: string;
  namespace: string;
  container: string;
  uuid: string;
}

export interface RunningGpuExporter {
  /** …/metrics: every family. */
  url: string;
  setCard(uuid: string, r: Partial<CardReading>): void;
  /** A container using card `uuid` (the sharing layer's slice): its own figures; null removes it. */
  setContainer(ref: ContainerRef, r: { util: number; memUsedMiB: number } | null): void;
  /** The card reports XID `code` (`times` more of it): the last-XID gauge and the per-code counter move. */
  raiseXid(uuid: string, code: number, times?: number): void;
  /** The card counts `n` more double-bit ECC errors. */
  raiseEcc(uuid: string, n?: number): void;
  /** Forgets every container of a pod (it went away). */
  removeContainer(ref: Pick<ContainerRef, "pod" | "namespace">): void;
  stop(): Promise<void>;
}

const esc = (v: string) => v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
const labels = (l: Record<string, string>) =>
  `{${Object.entries(l)
    .map(([k, v]) => `${k}="${esc(v)}"`)
    .join(",")}}`;

export async function startGpuExporter(o: { cards: GpuCard[] }): Promise<RunningGpuExporter> {
  const cards = o.cards.map((c, i) => ({
    ...c,
    index: o.cards.slice(0, i).filter((x) => x.node === c.node).length,
    r: { util: 0, memUsedMiB: 0, powerW: 70, tempC: 35, xid: 0 } as CardReading,
    xids: new Map<number, number>(),
    eccDbe: 0,
  }));
  const containers = new Map<string, { ref: ContainerRef; util: number; memUsedMiB: number }>();
  const key = (r: ContainerRef) => `${r.namespace}/${r.pod}/${r.container}/${r.uuid}`;

  function dcgm(): string {
    const out: string[] = [];
    const family = (name: string, help: string, type: string, value: (c: (typeof cards)[number]) => number) => {
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const c of cards) {
        const base = {
          gpu: String(c.index),
          UUID: c.uuid,
          device: `nvidia${c.index}`,
          modelName: c.model,
          Hostname: c.node,
          DCGM_FI_DRIVER_VERSION: "550.54.15",
        };
        const users = [...containers.values()].filter((x) => x.ref.uuid === c.uuid);
        const pods = users.length > 0 ? users.map((u) => u.ref) : [{ pod: "", namespace: "", container: "" }];
        for (const p of pods)
          out.push(
            `${name}${labels({ ...base, container: p.container, namespace: p.namespace, pod: p.pod })} ${value(c)}`,
          );
      }
    };
    family("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", "gauge", (c) => c.r.util);
    family("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", "gauge", (c) => c.r.memUsedMiB);
    family("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", "gauge", (c) =>
      Math.max(0, c.memoryMiB - c.r.memUsedMiB),
    );
    family("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", "gauge", (c) => c.r.powerW);
    family("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", "gauge", (c) => c.r.tempC);
    family("DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.", "gauge", (c) => c.r.xid);
    // Per card, not per pod: an error counter is the card's.
    const cardBase = (c: (typeof cards)[number]) => ({
      gpu: String(c.index),
      UUID: c.uuid,
      device: `nvidia${c.index}`,
      modelName: c.model,
      Hostname: c.node,
    });
    out.push("# HELP DCGM_FI_DEV_ECC_DBE_VOL_TOTAL Total number of double-bit volatile ECC errors.");
    out.push("# TYPE DCGM_FI_DEV_ECC_DBE_VOL_TOTAL counter");
    for (const c of cards) out.push(`DCGM_FI_DEV_ECC_DBE_VOL_TOTAL${labels(cardBase(c))} ${c.eccDbe}`);
    out.push("# HELP DCGM_EXP_XID_ERRORS_COUNT Count of XID errors by code.");
    out.push("# TYPE DCGM_EXP_XID_ERRORS_COUNT counter");
    for (const c of cards)
      for (const [code, n] of c.xids)
        out.push(`DCGM_EXP_XID_ERRORS_COUNT${labels({ ...cardBase(c), xid: String(code) })} ${n}`);
    return `${out.join("\n")}\n`;
  }

  function hami(): string {
    const out: string[] = [];
    const host = (name: string, help: string, l: (c: (typeof cards)[number]) => Record<string, string>) => {
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`);
      for (const c of cards) out.push(`${name}${labels(l(c))} ${c.r.util}`);
    };
    host("hami_host_gpu_utilization_ratio", "GPU core utilization ratio (0-100)", (c) => ({
      node: c.node,
      device_index: String(c.index),
      device_uuid: c.uuid,
      device_type: `NVIDIA-${c.model}`,
    }));
    host("HostCoreUtilization", "GPU core utilization", (c) => ({
      nodeid: c.node,
      deviceidx: String(c.index),
      deviceuuid: c.uuid,
      devicetype: `NVIDIA-${c.model}`,
    }));
    const ctr = (
      name: string,
      help: string,
      legacy: boolean,
      value: (x: { util: number; memUsedMiB: number }) => number,
    ) => {
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`);
      for (const x of containers.values()) {
        const l: Record<string, string> = legacy
          ? {
              podnamespace: x.ref.namespace,
              podname: x.ref.pod,
              ctrname: x.ref.container,
              vdeviceid: "0",
              deviceuuid: x.ref.uuid,
            }
          : {
              namespace: x.ref.namespace,
              pod: x.ref.pod,
              container: x.ref.container,
              vdevice_index: "0",
              device_uuid: x.ref.uuid,
            };
        out.push(`${name}${labels(l)} ${value(x)}`);
      }
    };
    ctr("hami_container_device_utilization_ratio", "Container device SM utilization ratio", false, (x) => x.util);
    ctr("hami_vgpu_memory_used_bytes", "vGPU device memory usage in bytes", false, (x) => x.memUsedMiB * 1_048_576);
    ctr("Device_utilization_desc_of_container", "Container device utilization description", true, (x) => x.util);
    ctr("vGPU_device_memory_usage_in_bytes", "vGPU device usage", true, (x) => x.memUsedMiB * 1_048_576);
    return `${out.join("\n")}\n`;
  }

  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "/").split("?")[0];
    const body =
      path === "/metrics"
        ? dcgm() + hami()
        : path === "/dcgm/metrics"
          ? dcgm()
          : path === "/hami/metrics"
            ? hami()
            : undefined;
    if (body === undefined) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" }).end(body);
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
  let stopped: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/metrics`,
    setCard(uuid, r) {
      const c = cards.find((x) => x.uuid === uuid);
      if (!c) throw new Error(`no card ${uuid}`);
      c.r = { ...c.r, ...r };
    },
    raiseXid(uuid, code, times = 1) {
      const c = cards.find((x) => x.uuid === uuid);
      if (!c) throw new Error(`no card ${uuid}`);
      c.r = { ...c.r, xid: code };
      c.xids.set(code, (c.xids.get(code) ?? 0) + times);
    },
    raiseEcc(uuid, n = 1) {
      const c = cards.find((x) => x.uuid === uuid);
      if (!c) throw new Error(`no card ${uuid}`);
      c.eccDbe += n;
    },
    setContainer(ref, r) {
      if (!cards.some((x) => x.uuid === ref.uuid)) throw new Error(`no card ${ref.uuid}`);
      if (r === null) containers.delete(key(ref));
      else containers.set(key(ref), { ref, ...r });
    },
    removeContainer(ref) {
      for (const [k, c] of containers)
        if (c.ref.pod === ref.pod && c.ref.namespace === ref.namespace) containers.delete(k);
    },
    stop: () =>
      (stopped ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      })),
  };
}
