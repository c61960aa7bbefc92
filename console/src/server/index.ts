// @berth/console, the Node side: build the console and serve it from the API process. The browser app
// itself lives in console/src and is bundled by Vite.
export { buildConsole, CONSOLE_DIST, ensureConsoleBuilt, isConsoleBuildCurrent } from "./build.ts";
export {
  type ConsoleContext,
  isReservedPath,
  RESERVED_PREFIXES,
  type ServeConsoleOptions,
  serveConsole,
} from "./serve.ts";
export { consoleService } from "./service.ts";
