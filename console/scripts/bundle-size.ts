// Prints the size of the built console (run after a build): every JS and CSS file, raw and gzip, the
// entry's own share (what the sessions page needs) and the lazily loaded admin chunks.
//   node console/scripts/bundle-size.ts
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { CONSOLE_DIST, ensureConsoleBuilt } from "../src/server/build.ts";

ensureConsoleBuilt({ log: console.log });
const assets = join(CONSOLE_DIST, "assets");
const index = readFileSync(join(CONSOLE_DIST, "index.html"), "utf8");
const rows = readdirSync(assets)
  .filter((f) => /\.(js|css)$/.test(f))
  .map((f) => {
    const raw = readFileSync(join(assets, f));
    return { file: f, raw: raw.length, gzip: gzipSync(raw, { level: 9 }).length, initial: index.includes(f) };
  })
  .sort((a, b) => b.gzip - a.gzip);
const kb = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
for (const r of rows)
  console.log(
    `${r.initial ? "initial" : "lazy   "}  ${kb(r.raw).padStart(10)}  gzip ${kb(r.gzip).padStart(9)}  ${r.file}`,
  );
const sum = (xs: typeof rows, k: "raw" | "gzip") => xs.reduce((a, r) => a + r[k], 0);
const js = rows.filter((r) => r.file.endsWith(".js"));
const css = rows.filter((r) => r.file.endsWith(".css"));
const initial = rows.filter((r) => r.initial);
console.log(
  `JS total ${kb(sum(js, "raw"))} (gzip ${kb(sum(js, "gzip"))}); CSS files ${kb(sum(css, "raw"))} (gzip ${kb(sum(css, "gzip"))}; styles live in the components); initial load gzip ${kb(sum(initial, "gzip"))}`,
);
