// Synth-time checks of construct options. A construct refuses options that make no sense with an
// OptionError naming the option, so a mistake never reaches a cluster as a broken manifest.
import { isIPv4, isIPv6 } from "node:net";

export class OptionError extends Error {
  readonly option: string;
  constructor(option: string, problem: string) {
    super(`${option}: ${problem}`);
    this.name = "OptionError";
    this.option = option;
  }
}

// RFC 1123 host name: dot-separated labels of letters, digits and inner hyphens, 253 characters at most.
const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

export function hostname(option: string, v: string): string {
  if (v.length === 0 || v.length > 253 || !v.split(".").every((l) => LABEL.test(l)) || !/[a-z]/.test(v))
    throw new OptionError(option, `"${v}" is not a host name such as sessions.example.com (lower case, no scheme)`);
  return v;
}

/** A DNS-1123 label: names of namespaces, Secrets, ServiceAccounts. */
export function dnsLabel(option: string, v: string): string {
  if (!LABEL.test(v)) throw new OptionError(option, `"${v}" is not a DNS label (lower case letters, digits, "-")`);
  return v;
}

/**
 * Where pods pull images from: a registry's host[:port], with a repository path after it when `path` (an
 * external registry's namespace); what image references start with.
 */
export function pullPrefix(option: string, v: string, { path = false } = {}): string {
  const re = path ? /^[a-z0-9.-]+(:\d+)?(\/[a-z0-9._-]+)*$/ : /^[a-z0-9.-]+(:\d+)?$/;
  if (!re.test(v)) throw new OptionError(option, `"${v}" is not ${path ? "host[:port][/path]" : "a host[:port]"}`);
  return v;
}

export function cidr(option: string, v: string): string {
  const [addr = "", prefix, ...rest] = v.split("/");
  const bits = isIPv4(addr) ? 32 : isIPv6(addr) ? 128 : 0;
  const n = prefix !== undefined && /^\d{1,3}$/.test(prefix) ? Number(prefix) : -1;
  if (bits === 0 || rest.length > 0 || n < 0 || n > bits)
    throw new OptionError(option, `"${v}" is not a CIDR such as 10.0.0.0/8 or fd00::/8`);
  return v;
}

export function cidrs(option: string, vs: readonly string[], { min = 0 } = {}): string[] {
  if (vs.length < min) throw new OptionError(option, `needs at least ${min} CIDR`);
  return vs.map((v, i) => cidr(`${option}[${i}]`, v));
}

/** A volume size in binary units, e.g. 50Gi. */
export function size(option: string, v: string, example = "50Gi"): string {
  if (!/^\d+(Mi|Gi|Ti)$/.test(v)) throw new OptionError(option, `"${v}" is not a size such as ${example}`);
  return v;
}

export function count(option: string, v: number, { min = 1, max = 1000 } = {}): number {
  if (!Number.isInteger(v) || v < min || v > max)
    throw new OptionError(option, `${v} is not a whole number from ${min} to ${max}`);
  return v;
}

export function url(option: string, v: string): string {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new OptionError(option, `"${v}" is not a URL such as https://berth-internal.example.com`);
  }
  if (u.protocol !== "https:" && u.protocol !== "http:")
    throw new OptionError(option, `"${v}" must be an http or https URL`);
  return v;
}

export function image(option: string, v: string): string {
  if (!/^[a-z0-9]([a-z0-9._:/-]*[a-z0-9])?(@sha256:[a-f0-9]{64})?$/.test(v) || v.includes("//"))
    throw new OptionError(option, `"${v}" is not an image reference such as registry.example.com/berth:1.0.0`);
  return v;
}
