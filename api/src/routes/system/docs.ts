// The interactive API browser at /api/v1/docs: swagger-ui from the swagger-ui-dist package, served from
// our own origin (no CDN), pointed at /api/v1/openapi.json.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type Router from "@koa/router";

const SWAGGER_UI_DIR = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));

export const DOCS_PATH = "/api/v1/docs";
const ASSETS: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png",
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Berth API</title>
<link rel="stylesheet" href="${DOCS_PATH}/assets/swagger-ui.css">
<link rel="icon" type="image/png" href="${DOCS_PATH}/assets/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${DOCS_PATH}/assets/swagger-ui-bundle.js"></script>
<script src="${DOCS_PATH}/assets/init.js"></script>
</body>
</html>
`;

// validatorUrl null: the default would send our document to validator.swagger.io.
const INIT = `window.ui = SwaggerUIBundle({ url: "/api/v1/openapi.json", dom_id: "#swagger-ui", deepLinking: true, validatorUrl: null, persistAuthorization: false });\n`;

// Everything from our origin; swagger-ui sets inline styles and shows data: images.
const CSP =
  "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; frame-ancestors 'none'";

const cache = new Map<string, Buffer>();
async function asset(name: string): Promise<Buffer> {
  let b = cache.get(name);
  if (!b) {
    b = await readFile(join(SWAGGER_UI_DIR, name));
    cache.set(name, b);
  }
  return b;
}

export function mountDocs(router: Router): void {
  router.get(DOCS_PATH, (ctx) => {
    ctx.set("Content-Security-Policy", CSP);
    ctx.type = "text/html; charset=utf-8";
    ctx.body = PAGE;
  });
  router.get(`${DOCS_PATH}/assets/:name`, async (ctx) => {
    const name = ctx.params.name ?? "";
    if (name === "init.js") {
      ctx.type = "text/javascript; charset=utf-8";
      ctx.body = INIT;
      return;
    }
    const type = ASSETS[name];
    if (!type) return; // falls through to 404 not_found
    ctx.set("Cache-Control", "public, max-age=86400");
    ctx.type = type;
    ctx.body = await asset(name);
  });
}
