// What every process's entry point shares (the API, the worker, the operator, the gateway): configuration
// read once (every problem listed, exit 2), a graceful stop on SIGINT/SIGTERM with a deadline (a second
// signal exits at once), and a start-up failure reported on stderr (exit 1). The callers read process.env.
import type { Logger } from "pino";

/** Under Kubernetes' default 30 s grace period: a stop that hangs ends with a log line, not a SIGKILL. */
const STOP_DEADLINE_MS = 25_000;

/**
 * `parse()`, or, when it throws a `configError` (the caller's package's own class), writes its message
 * (every problem) to stderr and exits 2. Any other error is thrown on.
 */
export function configOrExit<C>(parse: () => C, configError: abstract new (...args: never[]) => Error): C {
  try {
    return parse();
  } catch (err) {
    if (err instanceof configError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}

/** On SIGINT/SIGTERM: `stop()`, then exit 0; exit 1 when it fails, takes over 25 s, or a second signal comes. */
export function stopOnSignals(log: Pick<Logger, "info" | "error">, stop: () => Promise<void>, stopped?: string): void {
  let signalled = false;
  const shutdown = (signal: string) => {
    if (signalled) process.exit(1); // a second signal: give up on the graceful path
    signalled = true;
    log.info({ signal }, "stopping");
    // Not unref'd: a stop hanging on nothing that keeps Node alive would otherwise end as a silent exit 0.
    setTimeout(() => {
      log.error("graceful stop took over 25 s; exiting");
      process.exit(1);
    }, STOP_DEADLINE_MS);
    stop().then(
      () => {
        if (stopped) log.info(stopped);
        process.exit(0);
      },
      (err: unknown) => {
        log.error({ err }, "stop failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => shutdown("SIGINT"));
  process.on("SIGTERM", () => shutdown("SIGTERM"));
}

/** Runs an entry point's `main`; a failure to start is written to stderr and exits 1. */
export function runMain(service: string, main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    process.stderr.write(
      `${service} failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  });
}
