// Image references as people write them (`python:3.12`, `ghcr.io/org/app@sha256:…`,
// `127.0.0.1:5001/probe/app:1`), parsed by the distribution grammar: a registry host when the first
// component has a dot, a colon or is `localhost`, else Docker Hub with `library/` for one-word names.
// Credentials never travel in a reference (they would land in logs, the audit and the image's record).

/** A repository path component (distribution/reference). */
export const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
export const TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
export const DIGEST = /^sha256:[a-f0-9]{64}$/;
const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*(?::\d{1,5})?$/;
const IPV6_HOST = /^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/;

export const DOCKER_HUB = "docker.io";

export interface ImageReference {
  /** Registry host as written (docker.io for Docker Hub), with its port. */
  registry: string;
  /** Repository path, e.g. library/python. */
  repository: string;
  tag?: string;
  digest?: string;
}

export class BadReference extends Error {
  /** `credentials` | `syntax` | `too_long`. */
  readonly reason: "credentials" | "syntax" | "too_long";
  constructor(reason: BadReference["reason"], message: string) {
    super(message);
    this.reason = reason;
  }
}

/** Parses a reference; throws BadReference saying what is wrong in words a person can act on. */
export function parseReference(input: string): ImageReference {
  const s = input.trim();
  if (s.length === 0) throw new BadReference("syntax", "the reference is empty");
  if (s.length > 512) throw new BadReference("too_long", "the reference is longer than 512 characters");
  if (/\s/.test(s)) throw new BadReference("syntax", "a reference has no spaces");
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(s)) {
    const rest = s.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "");
    if (/^[^/]*@/.test(rest))
      throw new BadReference("credentials", "a reference must not carry credentials (user:password@)");
    throw new BadReference("syntax", "write the reference without a scheme, e.g. ghcr.io/org/app:1");
  }
  const slash = s.indexOf("/");
  const first = slash === -1 ? s : s.slice(0, slash);
  if (slash !== -1 && first.includes("@"))
    throw new BadReference("credentials", "a reference must not carry credentials (user:password@)");

  let rest = s;
  let digest: string | undefined;
  const at = rest.indexOf("@");
  if (at !== -1) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) throw new BadReference("syntax", "the digest must be sha256: and 64 hex digits");
  }
  let registry = DOCKER_HUB;
  const parts = rest.split("/");
  const head = parts[0] ?? "";
  if (parts.length > 1 && (head.includes(".") || head.includes(":") || head === "localhost" || head.startsWith("["))) {
    if (!HOST.test(head) && !IPV6_HOST.test(head)) throw new BadReference("syntax", `"${head}" is not a registry host`);
    registry = head.toLowerCase();
    parts.shift();
  }
  let tag: string | undefined;
  const last = parts[parts.length - 1] ?? "";
  const colon = last.lastIndexOf(":");
  if (colon !== -1) {
    tag = last.slice(colon + 1);
    parts[parts.length - 1] = last.slice(0, colon);
    if (!TAG.test(tag))
      throw new BadReference(
        "syntax",
        "a tag is letters, digits, '_', '.' and '-' (at most 128), not starting with '.' or '-'",
      );
  }
  if (parts.length === 0 || parts.some((p) => !PATH_COMPONENT.test(p)))
    throw new BadReference(
      "syntax",
      "repository names are lowercase letters and digits, separated by '/', '.', '_', '__' or '-'",
    );
  if (registry === DOCKER_HUB && parts.length === 1) parts.unshift("library");
  const repository = parts.join("/");
  if (repository.length > 255) throw new BadReference("too_long", "the repository name is longer than 255 characters");
  return { registry, repository, ...(tag !== undefined ? { tag } : {}), ...(digest ? { digest } : {}) };
}

/** The reference written back in full (registry, repository, then digest or tag; `latest` when neither). */
export function formatReference(r: ImageReference): string {
  return `${r.registry}/${r.repository}${r.digest ? `@${r.digest}` : `:${r.tag ?? "latest"}`}`;
}
