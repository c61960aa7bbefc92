import { describe, expect, it } from "vitest";
import { faultReadings } from "./readings.ts";

const card = 'gpu="0",UUID="GPU-1",device="nvidia0",modelName="H100",Hostname="node-a"';

describe("fault counters in a DCGM exporter's text", () => {
  it("reads XID counters by code and double-bit ECC counters per card and node", () => {
    const text = [
      "# TYPE DCGM_EXP_XID_ERRORS_COUNT counter",
      `DCGM_EXP_XID_ERRORS_COUNT{${card},xid="79"} 2`,
      `DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{${card}} 1 1700000000000`,
      `DCGM_FI_DEV_XID_ERRORS{${card}} 79`,
      `DCGM_FI_DEV_GPU_UTIL{${card}} 40`,
    ].join("\n");
    expect(faultReadings(text)).toEqual([
      { node: "node-a", uuid: "GPU-1", series: "xid:79", kind: "xid", code: 79, value: 2 },
      { node: "node-a", uuid: "GPU-1", series: "ecc_dbe", kind: "ecc_dbe", code: null, value: 1 },
    ]);
  });

  it("skips series it cannot place or read", () => {
    const text = [
      'DCGM_EXP_XID_ERRORS_COUNT{UUID="GPU-1",xid="79"} 1',
      `DCGM_EXP_XID_ERRORS_COUNT{${card},xid="x"} 1`,
      `DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{${card}} NaN`,
      `DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{${card}} -1`,
      "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL 3",
    ].join("\n");
    expect(faultReadings(text)).toEqual([]);
  });
});
