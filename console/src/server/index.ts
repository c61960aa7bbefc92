// @berth/console, the Node side: build the console (the API process serves the built files by path,
// api/src/http/console.ts). The browser app itself lives in console/src and is bundled by Vite.
export { buildConsole, CONSOLE_DIST, ensureConsoleBuilt, isConsoleBuildCurrent } from "./build.ts";
export { consoleService } from "./service.ts";
