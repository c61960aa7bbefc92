// Writes api/openapi.json from the route declarations: `npm run generate -w api`.
// The test suite fails when the committed file differs from what this produces.
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { contractRoutes } from "./contract.ts";
import { renderOpenApi } from "./http/openapi.ts";

export const OPENAPI_FILE = fileURLToPath(new URL("../openapi.json", import.meta.url));

if (import.meta.main) {
  writeFileSync(OPENAPI_FILE, renderOpenApi(contractRoutes));
  process.stdout.write(`wrote ${OPENAPI_FILE}\n`);
}
