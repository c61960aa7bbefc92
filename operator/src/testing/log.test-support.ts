// A pino logger whose records land in an array, so tests can assert what the operator said and why.
import { type Logger, pino } from "pino";

export interface CapturedLog {
  log: Logger;
  records: Record<string, unknown>[];
}

export function captureLog(level = "debug", echo = false): CapturedLog {
  const records: Record<string, unknown>[] = [];
  const log = pino(
    { level },
    {
      write(line: string) {
        records.push(JSON.parse(line) as Record<string, unknown>);
        if (echo) process.stderr.write(line);
      },
    },
  );
  return { log, records };
}
