// The fault counters of a DCGM exporter's text (docs/dev/node-pools.md, hardware faults):
// DCGM_EXP_XID_ERRORS_COUNT (one series per XID code, label `xid`) and DCGM_FI_DEV_ECC_DBE_VOL_TOTAL
// (double-bit ECC errors), per card (`UUID`) of a node (`Hostname`). Pure, so the parsing is table-tested.

export interface FaultReading {
  node: string;
  uuid: string;
  /** `xid:<code>` or `ecc_dbe`: one counter of one card. */
  series: string;
  kind: "xid" | "ecc_dbe";
  code: number | null;
  value: number;
}

const XID = "DCGM_EXP_XID_ERRORS_COUNT";
const ECC = "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL";
const LABEL = /([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function faultReadings(text: string): FaultReading[] {
  const out: FaultReading[] = [];
  for (const line of text.split("\n")) {
    const kind = line.startsWith(`${XID}{`) ? "xid" : line.startsWith(`${ECC}{`) ? "ecc_dbe" : undefined;
    if (!kind) continue;
    const close = line.lastIndexOf("}");
    if (close < 0) continue;
    const labels = new Map<string, string>();
    for (const m of line.slice(0, close).matchAll(LABEL)) labels.set(m[1] as string, m[2] as string);
    const value = Number(
      line
        .slice(close + 1)
        .trim()
        .split(/\s+/)[0],
    );
    const node = labels.get("Hostname");
    const uuid = labels.get("UUID");
    if (!node || !uuid || !Number.isFinite(value) || value < 0) continue;
    if (kind === "xid") {
      const code = Number(labels.get("xid"));
      if (!Number.isInteger(code) || code <= 0) continue;
      out.push({ node, uuid, series: `xid:${code}`, kind, code, value });
    } else out.push({ node, uuid, series: "ecc_dbe", kind, code: null, value });
  }
  return out;
}
