import { describe, expect, it } from "vitest";
import { filterFromQuery, queryFromFilter } from "./sessions-query.ts";

describe("the sessions list's filters", () => {
  it("round-trip through the URL and ignore what they do not know", () => {
    const f = filterFromQuery(new URLSearchParams("scope=all&state=Running&cluster=clu_a&page=2"));
    expect(f).toEqual({ scope: "all", phase: "Running", cluster: "clu_a", page: 2 });
    expect(queryFromFilter(f)).toBe("?scope=all&state=Running&cluster=clu_a&page=2");
    expect(filterFromQuery(new URLSearchParams("scope=everything&state=Sleeping&page=-1"))).toEqual({
      scope: "mine",
      phase: "",
      cluster: "",
      page: 1,
    });
    expect(queryFromFilter({ scope: "mine", phase: "", cluster: "", page: 1 })).toBe("");
  });
});
