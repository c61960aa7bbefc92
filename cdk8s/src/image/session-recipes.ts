// What each session image puts on the shared base (session-base.ts): the packages, files and script run
// under chroot, the stages built on the host (xterm.js, code-server), and the image's configuration.
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { type ImageConfig, ROOT } from "./build.ts";
import { SUITE, USER } from "./session-base.ts";
import { cacheRoot } from "./session-key.ts";
import { chrootSh, removeBuildDir, run } from "./session-steps.ts";

export const JUPYTERLAB_VERSION = "4.6.6";
export const CODE_SERVER_VERSION = "4.139.1";

export type SessionImageKind = "jupyterlab" | "terminal" | "code";
export const KINDS: SessionImageKind[] = ["jupyterlab", "terminal", "code"];

/** What a session pod runs each image with (controllers/src/mirror/manifests.ts APP_PORTS). */
export const PORTS: Record<SessionImageKind, number> = { jupyterlab: 8888, terminal: 7681, code: 8080 };

/** The repository each image is pushed to; its tag is the first 12 characters of its key. */
export const REPOSITORIES: Record<SessionImageKind, string> = {
  jupyterlab: "sessions/jupyterlab",
  terminal: "sessions/terminal",
  code: "sessions/code-server",
};

interface Recipe {
  /** Runs under chroot in the overlay, as root, with the network. */
  script: string;
  /** Files from cdk8s/src/image/sessions/ copied in first: [file, path in the image, mode]. */
  files: [string, string, number][];
  /** Anything else the key must cover (versions, the Node binary). */
  inputs: string[];
  config: Omit<ImageConfig, "User" | "WorkingDir">;
  /** Runs on the host before the layer is taken, with the overlay's merged root (a build stage's output). */
  host?: (merged: string) => void;
}

const ENV_BASE = [
  "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
  `HOME=${USER.home}`,
  "SHELL=/bin/bash",
  "LANG=C.UTF-8",
  `NB_USER=${USER.name}`,
  `NB_UID=${USER.uid}`,
  `NB_GID=${USER.gid}`,
];
const APT = "apt-get -o Dpkg::Use-Pty=0 -qq";
const aptInstall = (packages: string[]) =>
  `${APT} update && DEBIAN_FRONTEND=noninteractive ${APT} install -y --no-install-recommends ${packages.join(" ")} >/dev/null`;

/** Node 24, the project's own (the `node` package), with its headers for native modules. */
const NODE_DIST = () => {
  const dist = [join(ROOT, "node_modules/node/node_modules"), join(ROOT, "node_modules")]
    .map((d) => join(d, `node-linux-${process.arch === "x64" ? "x64" : process.arch}`))
    .find((d) => existsSync(join(d, "include/node/node.h")));
  if (!dist) throw new Error("the `node` package's distribution (bin/node, include/node) is not installed: npm ci");
  return dist;
};
const nodeVersion = () => execFileSync(join(NODE_DIST(), "bin/node"), ["--version"], { encoding: "utf8" }).trim();

export function recipes(): Record<SessionImageKind, Recipe> {
  const port = (k: SessionImageKind) => ({ [`${PORTS[k]}/tcp`]: {} as Record<string, never> });
  const volumes = { [`${USER.home}/work`]: {} as Record<string, never> };
  const label = (title: string, version: string) => ({
    "org.opencontainers.image.title": title,
    "org.opencontainers.image.version": version,
  });
  const terminalPackages = ["python3-terminado"];
  return {
    jupyterlab: {
      files: [["start-jupyterlab.sh", "/usr/local/bin/start-session", 0o755]],
      inputs: [`jupyterlab==${JUPYTERLAB_VERSION}`],
      // A virtual environment the user owns, as the Docker Stacks' conda: `pip install` in a cell works.
      script: [
        "python3 -m venv /opt/venv",
        `PIP_CERT=/etc/ssl/certs/ca-certificates.crt /opt/venv/bin/pip install -q --no-cache-dir --disable-pip-version-check jupyterlab==${JUPYTERLAB_VERSION}`,
        `chown -R ${USER.uid}:${USER.gid} /opt/venv`,
      ].join("\n"),
      config: {
        Env: [
          "PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
          ...ENV_BASE.slice(1),
          "JUPYTER_PORT=8888",
        ],
        Entrypoint: ["/usr/bin/tini", "-g", "--"],
        Cmd: ["/usr/local/bin/start-session"],
        ExposedPorts: port("jupyterlab"),
        Volumes: volumes,
        Labels: label("berth-session-jupyterlab", JUPYTERLAB_VERSION),
      },
    },
    terminal: {
      files: [
        ["terminal.py", "/usr/local/lib/berth/terminal.py", 0o644],
        ["terminal.html", "/usr/local/lib/berth/terminal.html", 0o644],
      ],
      inputs: [...terminalPackages, ...XTERM],
      script: aptInstall(terminalPackages),
      host: (merged) => addXterm(merged),
      config: {
        Env: ENV_BASE,
        Entrypoint: ["/usr/bin/tini", "-g", "--"],
        Cmd: ["/usr/bin/python3", "/usr/local/lib/berth/terminal.py"],
        ExposedPorts: port("terminal"),
        Volumes: volumes,
        Labels: label("berth-session-terminal", SUITE),
      },
    },
    code: {
      files: [["code-prefix.mjs", "/usr/local/lib/berth/code-prefix.mjs", 0o644]],
      inputs: [`code-server@${CODE_SERVER_VERSION}`, nodeVersion(), "git", "openssh-client"],
      script: aptInstall(["git", "openssh-client"]),
      host: (merged) => buildCodeServer(merged),
      config: {
        Env: ENV_BASE,
        Entrypoint: ["/usr/bin/tini", "-g", "--"],
        Cmd: ["/usr/local/bin/node", "/usr/local/lib/berth/code-prefix.mjs"],
        ExposedPorts: port("code"),
        Volumes: volumes,
        Labels: label("berth-session-code-server", CODE_SERVER_VERSION),
      },
    },
  };
}

/** xterm.js from npm: Debian's libjs-xterm (3.8) ships a browser file that only `require`s its modules. */
const XTERM = ["@xterm/xterm@6.0.0", "@xterm/addon-fit@0.11.0"];

/** Fetches npm packages' tarballs with the host's npm; answers where each was unpacked. */
function npmPack(specs: string[], into: string): string[] {
  const names = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", into, ...specs])) as {
    filename: string;
  }[];
  return names.map(({ filename }) => {
    const dir = join(into, filename.replace(/\.tgz$/, ""));
    mkdirSync(dir);
    run("tar", ["-xzf", join(into, filename), "-C", dir, "--strip-components=1", "--no-same-owner"]);
    return dir;
  });
}

/** The terminal page's browser side: xterm.js and its fit addon, beside terminal.py. */
function addXterm(merged: string) {
  const tmp = mkdtempSync(join(cacheRoot(), ".xterm-"));
  try {
    const [xterm, fit] = npmPack(XTERM, tmp) as [string, string];
    const to = join(merged, "usr/local/lib/berth/xterm");
    mkdirSync(to, { recursive: true });
    for (const [from, name] of [
      [join(xterm, "lib/xterm.js"), "xterm.js"],
      [join(xterm, "css/xterm.css"), "xterm.css"],
      [join(xterm, "LICENSE"), "LICENSE.xterm"],
      [join(fit, "lib/addon-fit.js"), "addon-fit.js"],
    ] as const) {
      cpSync(from, join(to, name));
      chmodSync(join(to, name), 0o644);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * code-server from npm, built in a stage of its own (the base plus a compiler, for its native modules) with
 * the project's Node 24 (its `engines`), then copied into the image without the compiler.
 */
function buildCodeServer(merged: string) {
  const node = NODE_DIST();
  const npm = dirname(dirname(realpathSync(execFileSync("sh", ["-c", "command -v npm"], { encoding: "utf8" }).trim())));
  const stage = mkdtempSync(join(cacheRoot(), ".code-stage-"));
  const [upper, work, root] = ["upper", "work", "merged"].map((d) => join(stage, d)) as [string, string, string];
  for (const d of [upper, work, root]) mkdirSync(d);
  // The stage's lower layers: the image being built over the base, as the overlay's merged view shows it.
  run("mount", ["-t", "overlay", "overlay", "-o", `lowerdir=${merged},upperdir=${upper},workdir=${work}`, root]);
  try {
    for (const d of ["bin", "include", "share"]) cpSync(join(node, d), join(root, "usr/local", d), { recursive: true });
    cpSync(npm, join(root, "opt/npm"), { recursive: true });
    chrootSh(
      root,
      [
        aptInstall([
          "build-essential",
          "pkg-config",
          "python3",
          "libkrb5-dev",
          "libx11-dev",
          "libxkbfile-dev",
          "libsecret-1-dev",
        ]),
        // Its postinstall runs `npm` itself.
        "ln -sf /opt/npm/bin/npm-cli.js /usr/local/bin/npm",
        `npm install -g --prefix /usr/local --no-audit --no-fund code-server@${CODE_SERVER_VERSION}`,
      ].join("\n"),
      {
        NODE_EXTRA_CA_CERTS: "/etc/ssl/certs/ca-certificates.crt",
        npm_config_nodedir: "/usr/local",
        npm_config_cache: "/tmp/npm-cache",
        npm_config_update_notifier: "false",
      },
    );
    // Into the image: Node and code-server only.
    cpSync(join(root, "usr/local/bin/node"), join(merged, "usr/local/bin/node"));
    cpSync(
      join(root, "usr/local/lib/node_modules/code-server"),
      join(merged, "usr/local/lib/node_modules/code-server"),
      {
        recursive: true,
        verbatimSymlinks: true,
      },
    );
  } finally {
    spawnSync("umount", ["-l", root]);
    removeBuildDir(stage);
  }
  // Runtime libraries of its native modules (Kerberos, keymaps, the keyring), without their -dev halves.
  chrootSh(merged, aptInstall(["libkrb5-3", "libgssapi-krb5-2", "libx11-6", "libxkbfile1", "libsecret-1-0"]));
}

// Exported by a list, not by `export` on each: their text, and with it the images' keys, stays as it was.
export { addXterm, buildCodeServer, npmPack };
