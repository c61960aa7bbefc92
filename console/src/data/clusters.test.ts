import { describe, expect, it } from "vitest";
import { checkLines, checksFromDetails } from "./clusters.ts";

describe("the probe's checks", () => {
  it("are listed one by one in a stable order, with what to do for each failed one", () => {
    const lines = checkLines({
      reachable: true,
      credential_permissions: true,
      gpu_runtime_class: false,
      gpu_device_plugin: true,
    });
    expect(lines.map((l) => [l.key, l.ok])).toEqual([
      ["reachable", true],
      ["credential_permissions", true],
      ["gpu_runtime_class", false],
      ["gpu_device_plugin", true],
    ]);
    expect(lines[2]?.fix).toMatch(/RuntimeClass/);
  });

  it("read the checks of a refused registration from the error's details, ignoring what is not a boolean", () => {
    expect(checksFromDetails({ checks: { reachable: false, gpu_runtime_class: "?" } })).toEqual({ reachable: false });
    expect(checksFromDetails({})).toBeUndefined();
    expect(checkLines(undefined).every((l) => l.ok === undefined)).toBe(true);
  });
});
