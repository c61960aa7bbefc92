import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { GENERATED_PATH, loadDocument, render } from "../../scripts/gen-api-types.ts";

describe("the console's API types", () => {
  it("are generated from the API's OpenAPI document and up to date (npm run gen:types -w console)", async () => {
    const { doc, source } = await loadDocument();
    expect(readFileSync(GENERATED_PATH, "utf8")).toBe(render(doc, source));
  });
});
