// The Postgres relay the partition fault needs (relayTo, api/src/db/relay.test-support.ts), in a process of
// its own: in the bench's process every client's database traffic waited on the bench's event loop (the
// users' loops, the streams, an in-process operator), which on a loaded machine slowed every process
// (docs/dev/soak.md). The parent drives it over IPC: hang, heal, cut.
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { relayTo } from "@berth/api/testing";

if (process.argv[2] === "--serve" && process.send) {
  const relay = await relayTo(process.argv[3] ?? "");
  process.on("message", (m) => {
    if (m === "hang") relay.hang();
    else if (m === "heal") relay.heal();
    else if (m === "cut") void relay.cut().finally(() => process.exit(0));
  });
  // The parent gone (killed): nothing to relay for.
  process.on("disconnect", () => process.exit(0));
  process.send({ url: relay.url });
}

export interface ChildRelay {
  url: string;
  hang(): void;
  heal(): void;
  cut(): Promise<void>;
}

export async function relayInChild(url: string): Promise<ChildRelay> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ["--serve", url], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  process.on("exit", () => child.kill("SIGKILL"));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const relayUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the relay did not start within 60 s")), 60_000);
    child.once("message", (m) => {
      clearTimeout(timer);
      resolve((m as { url: string }).url);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the relay exited (${code}) before it listened`));
    });
  });
  return {
    url: relayUrl,
    hang: () => void child.send("hang"),
    heal: () => void child.send("heal"),
    async cut() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.send("cut");
      const kill = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(kill);
    },
  };
}
