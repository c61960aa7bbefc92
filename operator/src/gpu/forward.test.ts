// The GPU round's forward: the exporters' texts as job gpu-exporter, nothing else (the operator's and the
// gateways' figures go on their own round, forwarding/processRound.test.ts).
import { describe, expect, it } from "vitest";
import { recordingInternal } from "../testing/stub-control-plane.test-support.ts";
import { forwardMetrics } from "./forward.ts";

describe("forwarding a GPU round", () => {
  it("sends each exporter's text as job gpu-exporter", async () => {
    const internal = recordingInternal();
    expect(await forwardMetrics(internal as never, "clu_f", ["a 1\n", "b 2\n"])).toBe("ok");
    expect(internal.sent).toEqual([
      {
        cluster_id: "clu_f",
        sources: [
          { job: "gpu-exporter", text: "a 1\n" },
          { job: "gpu-exporter", text: "b 2\n" },
        ],
      },
    ]);
  });

  it("sends nothing for a round that read no exporter", async () => {
    const internal = recordingInternal();
    expect(await forwardMetrics(internal as never, "clu_f", [])).toBe("empty");
    expect(internal.sent).toEqual([]);
  });
});
