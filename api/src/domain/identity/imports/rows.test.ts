import { describe, expect, it } from "vitest";
import { csvCell, parseCsv } from "./csv.ts";
import { checkRows, creditsToUnits } from "./rows.ts";

describe("an import's CSV", () => {
  it("reads quoted fields, doubled quotes, CRLF and LF, a BOM, and leaves blank lines out", () => {
    expect(parseCsv('\ufeffemail,name\r\na@x.test,"Lovelace, Ada"\n\nb@x.test,"say ""hi""\nthere"\n')).toEqual([
      { line: 1, cells: ["email", "name"] },
      { line: 2, cells: ["a@x.test", "Lovelace, Ada"] },
      { line: 4, cells: ["b@x.test", 'say "hi"\nthere'] },
    ]);
  });

  it.each([
    ['email\n"a@x.test', "unterminated_quote"],
    ['email\na"b@x.test', "stray_quote"],
    ['email\n"a@x.test"b', "stray_quote"],
  ])("refuses %j as a whole (%s)", (text, reason) => {
    expect(() => parseCsv(text)).toThrow(
      expect.objectContaining({ code: "import_csv_malformed", details: expect.objectContaining({ reason }) }),
    );
  });

  it.each([
    ["=1+1", "'=1+1"],
    ["+1", "'+1"],
    ["-1", "'-1"],
    ["@SUM(A1)", "'@SUM(A1)"],
    ["\tx", "'\tx"],
    ["\rx", '"\'\rx"'],
    ["a,b", '"a,b"'],
    ["plain", "plain"],
  ])("writes %j for a spreadsheet as %j", (value, cell) => {
    expect(csvCell(value)).toBe(cell);
  });

  it("reads credits as a person types them, exactly, into minor units", () => {
    expect(creditsToUnits("2.5")).toBe(2_500_000n);
    expect(creditsToUnits("0.000001")).toBe(1n);
    expect(creditsToUnits("10")).toBe(10_000_000n);
    for (const bad of ["1e6", "-1", "1.0000001", "01", "1,5", ""]) expect(creditsToUnits(bad)).toBeUndefined();
  });

  it("checks each row on its own, in any column order, refusing every copy of a duplicated email", () => {
    const rows = checkRows(
      parseCsv(
        [
          "Role,EMAIL,Organization,Project,Initial Credits",
          "project_admin,a@x.test,lab,vision,1",
          "member,A@X.test,lab,,",
          "org_admin,c@x.test,lab,vision,",
          "member,d@x.test,,,",
          "owner,e@x.test,lab,,",
        ].join("\n"),
      ),
    );
    expect(rows.map((r) => (r.ok ? "ok" : r.code))).toEqual([
      "duplicate_email",
      "duplicate_email",
      "invalid_role",
      "ok",
      "invalid_role",
    ]);
  });
});
