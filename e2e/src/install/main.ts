// `npm run bed:install`: Berth installed on the bed's real node (bed.ts), up until Ctrl-C, then torn down.
import { installOnTheBed } from "./bed.ts";
import { InstallError } from "./checks.ts";

const log = (line: string) => console.log(line);
const stopped = new AbortController();
// `on`, not `once`: the bed's own hook (e2e/src/testbed/process.ts) kills everything at once when no one
// else listens. A second Ctrl-C exits, and that hook then kills what is left.
for (const sig of ["SIGINT", "SIGTERM"] as const)
  process.on(sig, () => {
    if (stopped.signal.aborted) process.exit(130);
    stopped.abort();
  });
let install: Awaited<ReturnType<typeof installOnTheBed>>;
try {
  install = await installOnTheBed({ log, signal: stopped.signal });
} catch (e) {
  console.error(e instanceof InstallError ? `[install] ${e.message}` : e);
  process.exit(1);
}
const t = install.timings;
log(`[install] Berth is installed in ${t.total?.toFixed(1)} s on ${install.node.name} (cluster ${install.clusterId})`);
log(`  console:    ${install.consoleUrl}`);
log(`  sign in:    ${install.admin.email} / ${install.admin.password}`);
log(`  kubectl:    kubectl --kubeconfig ${install.kubeconfigPath} -n berth-system get pods -o wide`);
log("Ctrl-C stops and removes everything.");
await new Promise<void>((resolve) => {
  if (stopped.signal.aborted) resolve();
  stopped.signal.addEventListener("abort", () => resolve());
});
log("[install] stopping");
await install.stop();
log("[install] stopped");
process.exit(0);
