// `node operator/src/standin/main.ts [port]`: a stand-in application on loopback, for trying the gateway by hand.
import { startStandin } from "./standin.ts";

const port = Number(process.argv[2] ?? process.env.BERTH_STANDIN_PORT ?? 0);
const s = await startStandin({ port, log: (l) => console.log(l) });
console.log(`[standin] listening on ${s.url}`);
const stop = (): void => {
  s.close().then(() => process.exit(0));
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
