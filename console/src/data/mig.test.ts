import { describe, expect, it } from "vitest";
import { formatMigProfiles, parseMigProfiles } from "./mig.ts";

describe("a MIG layout's profiles as typed", () => {
  it("reads profile=instances entries separated by commas, semicolons or lines", () => {
    expect(parseMigProfiles("3g.40gb=1, 2g.20gb = 1;\n1G.10GB=2")).toEqual({
      ok: true,
      profiles: { "3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2 },
    });
    expect(parseMigProfiles("1g.10gb×7")).toEqual({ ok: true, profiles: { "1g.10gb": 7 } });
  });

  it("says what is wrong with an empty text, a malformed entry, a count out of range or a repeat", () => {
    expect(parseMigProfiles(" , ")).toEqual({ ok: false, message: "Name at least one profile, as 3g.40gb=1." });
    expect(parseMigProfiles("3g.40gb")).toMatchObject({ ok: false, message: expect.stringContaining("“3g.40gb”") });
    expect(parseMigProfiles("3g.40gb=0")).toMatchObject({ ok: false, message: expect.stringContaining("1 to 7") });
    expect(parseMigProfiles("3g.40gb=8")).toMatchObject({ ok: false, message: expect.stringContaining("1 to 7") });
    expect(parseMigProfiles("1g.10gb=1,1g.10gb=2")).toMatchObject({ ok: false, message: "1g.10gb is named twice." });
  });

  it("writes a layout largest profile first", () => {
    expect(formatMigProfiles({ "1g.10gb": 2, "3g.40gb": 1, "2g.20gb": 1 })).toBe(
      "3g.40gb × 1, 2g.20gb × 1, 1g.10gb × 2",
    );
  });
});
