// Postgres for an install without a managed database (`database.inCluster`, cdk8s/src/control-plane.ts),
// built here from Debian's PostgreSQL packages on the session images' Debian base (sessions.ts): one layer
// of `postgresql` installed under chroot into an overlay of that base, and a start script of our own that
// makes the cluster on an empty volume (the `berth` role and database, passwords from the environment) and
// then runs the server in the foreground. Runs as uid 65532 (pod.ts), with a read-only root: the data on
// its volume, the socket and scratch in /tmp.
//
// Cached by content in ~/.cache/berth/images/postgres-<key> (BERTH_IMAGE_CACHE): the key hashes the base's
// key, the packages, the script and this file.
//   node cdk8s/src/image/postgres.ts build
//   node cdk8s/src/image/postgres.ts push --registry 127.0.0.1:PORT
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { layerOf, tarOf, writeLayout } from "./build.ts";
import { parseRef, pushLayout } from "./push.ts";
import {
  baseKey,
  cacheRoot,
  chrootSh,
  clearScratch,
  ensureBase,
  LAYER_EXCLUDE,
  publish,
  removeBuildDir,
  run,
  whiteoutsToOci,
} from "./sessions.ts";

/** Debian bookworm's PostgreSQL. */
export const POSTGRES_MAJOR = 15;
export const POSTGRES_REPOSITORY = "berth/postgres";
export const POSTGRES_PORT = 5432;
/** The pod's user (cdk8s/src/pod.ts), made `postgres` here before the package would make its own. */
const UID = 65532;
/** Where the volume is mounted; the cluster is a folder below it (a fresh volume's lost+found is no cluster). */
export const POSTGRES_VOLUME = "/var/lib/postgresql/data";

const BIN = `/usr/lib/postgresql/${POSTGRES_MAJOR}/bin`;
/**
 * The start script. On an empty volume: initdb (superuser `postgres`, local trust, passwords elsewhere),
 * the `berth` role owning the `berth` database, every address admitted with a password (the
 * NetworkPolicy says who may connect). Then the server, as the container's first process.
 */
const START = `#!/bin/sh
set -eu
: "\${POSTGRES_PASSWORD:?POSTGRES_PASSWORD (the berth role's password) is not set}"
PGDATA=${POSTGRES_VOLUME}/pgdata
export PGDATA
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  rm -rf "$PGDATA.init"
  ${BIN}/initdb -D "$PGDATA.init" -U postgres -E UTF8 --locale=C.UTF-8 --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  echo "host all all 0.0.0.0/0 scram-sha-256" >> "$PGDATA.init/pg_hba.conf"
  echo "host all all ::/0 scram-sha-256" >> "$PGDATA.init/pg_hba.conf"
  ${BIN}/pg_ctl -D "$PGDATA.init" -o "-c listen_addresses= -c unix_socket_directories=/tmp" -w start >/dev/null
  printf '%s\\n' "CREATE ROLE berth LOGIN PASSWORD :'pw';" "CREATE DATABASE berth OWNER berth;" |
    ${BIN}/psql -h /tmp -U postgres -d postgres -v ON_ERROR_STOP=1 -v pw="$POSTGRES_PASSWORD" -q
  ${BIN}/pg_ctl -D "$PGDATA.init" -w stop >/dev/null
  # Renamed when whole: a start killed half-way initialises again.
  mv "$PGDATA.init" "$PGDATA"
  echo "berth-postgres: made the cluster in $PGDATA"
fi
# Postgres starts only on a folder of its owner alone.
chmod 0700 "$PGDATA"
exec ${BIN}/postgres -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/tmp -c port=${POSTGRES_PORT}
`;

const SCRIPT = [
  `groupadd --system --gid ${UID} postgres`,
  `useradd --system --no-log-init --uid ${UID} --gid ${UID} --home-dir /var/lib/postgresql --shell /bin/sh postgres`,
  "apt-get -o Dpkg::Use-Pty=0 -qq update",
  // postgresql-common would make a cluster of its own at install: not wanted, ours is made at start.
  "mkdir -p /etc/postgresql-common && echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.conf",
  `DEBIAN_FRONTEND=noninteractive apt-get -o Dpkg::Use-Pty=0 -qq install -y --no-install-recommends postgresql-${POSTGRES_MAJOR} >/dev/null`,
  `mkdir -p ${POSTGRES_VOLUME} && chown ${UID}:${UID} ${POSTGRES_VOLUME}`,
  "apt-get clean",
].join("\n");

const CONFIG = {
  User: `${UID}:${UID}`,
  WorkingDir: "/tmp",
  Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8"],
  Entrypoint: ["/usr/local/bin/berth-postgres"],
  ExposedPorts: { [`${POSTGRES_PORT}/tcp`]: {} },
};

const HERE = fileURLToPath(import.meta.url);

export function postgresKey(): string {
  const h = createHash("sha256");
  for (const p of [baseKey(), SCRIPT, START, JSON.stringify(CONFIG), readFileSync(HERE)]) h.update(p).update("\0");
  return h.digest("hex").slice(0, 32);
}

export interface BuiltPostgres {
  key: string;
  dir: string;
  digest: string;
  tag: string;
  seconds: number;
  cached: boolean;
}

const described = (key: string, started: number, cached: boolean): BuiltPostgres => {
  const dir = join(cacheRoot(), `postgres-${key}`, "oci");
  const index = JSON.parse(readFileSync(join(dir, "index.json"), "utf8")) as { manifests: { digest: string }[] };
  return {
    key,
    dir,
    digest: index.manifests[0]?.digest as string,
    tag: key.slice(0, 12),
    seconds: (performance.now() - started) / 1000,
    cached,
  };
};

/** Builds the image into the cache, or finds it there; under the session images' cache lock (flock). */
export function buildPostgresImage(opts: { quiet?: boolean } = {}): BuiltPostgres {
  const started = performance.now();
  const key = postgresKey();
  if (existsSync(join(cacheRoot(), `postgres-${key}`, "oci/index.json"))) return described(key, started, true);
  mkdirSync(cacheRoot(), { recursive: true });
  const r = spawnSync("flock", [join(cacheRoot(), ".build.lock"), process.execPath, HERE, "build-locked"], {
    stdio: ["ignore", opts.quiet ? "pipe" : "inherit", opts.quiet ? "pipe" : "inherit"],
    encoding: "utf8",
    maxBuffer: 2 ** 26,
  });
  if (r.status !== 0 || !existsSync(join(cacheRoot(), `postgres-${key}`, "oci/index.json")))
    throw new Error(
      `building the Postgres image failed (${r.status ?? r.signal}): ${`${r.stdout ?? ""}${r.stderr ?? ""}`.slice(-4000)}`,
    );
  return described(key, started, false);
}

function buildLocked(log: (s: string) => void): BuiltPostgres {
  const started = performance.now();
  const key = postgresKey();
  const final = join(cacheRoot(), `postgres-${key}`);
  if (existsSync(join(final, "oci/index.json"))) return described(key, started, true);
  const base = ensureBase(log);
  const tmp = mkdtempSync(join(cacheRoot(), ".postgres-"));
  const [upper, work, merged] = ["upper", "work", "merged"].map((d) => join(tmp, d)) as [string, string, string];
  for (const d of [upper, work, merged]) mkdirSync(d);
  let mounted = false;
  try {
    log(`postgres: building on base ${base.key.slice(0, 12)}`);
    run("mount", [
      "-t",
      "overlay",
      "overlay",
      "-o",
      `lowerdir=${base.rootfs},upperdir=${upper},workdir=${work}`,
      merged,
    ]);
    mounted = true;
    chrootSh(merged, SCRIPT);
    writeFileSync(join(merged, "usr/local/bin/berth-postgres"), START);
    chmodSync(join(merged, "usr/local/bin/berth-postgres"), 0o755);
    run("umount", [merged]);
    mounted = false;
    clearScratch(upper);
    whiteoutsToOci(upper);
    const layer = layerOf("postgres", tarOf(upper, ["."], undefined, LAYER_EXCLUDE, true));
    const out = join(tmp, "out");
    writeLayout(join(out, "oci"), key.slice(0, 12), [base.layer, layer], CONFIG, "cdk8s/src/image/postgres.ts");
    publish(out, final);
    log(`postgres ${key.slice(0, 12)}: ${((performance.now() - started) / 1000).toFixed(0)} s`);
    return described(key, started, false);
  } finally {
    if (mounted) spawnSync("umount", ["-l", merged]);
    removeBuildDir(tmp);
  }
}

export async function pushPostgresImage(built: BuiltPostgres, registryHost: string) {
  const ref = parseRef(`${registryHost}/${POSTGRES_REPOSITORY}:${built.tag}`);
  const r = await pushLayout(built.dir, ref, { plainHttp: true });
  return { ref: `${ref.host}/${ref.repository}:${ref.tag}`, ...r };
}

if (process.argv[1] === HERE) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { registry: { type: "string" } } });
  const command = positionals[0];
  if (command === "build-locked") {
    buildLocked((s) => console.log(s));
    process.exit(0);
  }
  if ((command !== "build" && command !== "push") || (command === "push" && !values.registry))
    throw new Error(
      "usage: node cdk8s/src/image/postgres.ts build\n       node cdk8s/src/image/postgres.ts push --registry <host:port>",
    );
  const built = buildPostgresImage();
  console.log(
    `postgres: ${built.digest} ${built.cached ? "from the cache" : "built"} in ${built.seconds.toFixed(1)} s`,
  );
  if (command === "push") {
    const r = await pushPostgresImage(built, values.registry as string);
    console.log(`  ${r.ref}@${r.digest}: ${r.uploaded} blobs uploaded, ${r.skipped} already there`);
  }
}
