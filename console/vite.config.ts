// Vite builds the console into console/dist, which the API serves at `/` (console/src/server/serve.ts).
// Everything is bundled: no CDN, no web fonts (system font stack), icons are inline SVG.
import { defineConfig } from "vite";

export default defineConfig({
  root: import.meta.dirname,
  base: "/",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    sourcemap: true,
    reportCompressedSize: false,
  },
  server: {
    // `npm run dev -w console` against a running API (npm start): BERTH_API_URL, default http://127.0.0.1:8080.
    proxy: {
      "/api": { target: process.env.BERTH_API_URL ?? "http://127.0.0.1:8080", changeOrigin: true },
      "/healthz": { target: process.env.BERTH_API_URL ?? "http://127.0.0.1:8080", changeOrigin: true },
    },
  },
});
