// A GPU cluster's Kubernetes API credential: what registration accepts, the one normalized shape Berth
// keeps (in a Secret of the management cluster) and hands to clients.
//
// Trap: a kubeconfig can make its reader run programs (`exec`, `auth-provider`) or read local files
// (`certificate-authority`, `client-key`, `tokenFile`). A registered kubeconfig is data from outside,
// read by the control plane's pods, so only inline material is accepted; anything else is refused as
// invalid input instead of silently ignored.
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { z } from "zod";

/** The normalized credential. PEM strings, never file paths. */
export interface ClusterCredential {
  /** https://host[:port][/path] */
  server: string;
  /** PEM bundle that verifies the apiserver's serving certificate; absent = the system trust store. */
  caPem?: string;
  /** Bearer token. */
  token?: string;
  /** Client certificate authentication (PEM). */
  clientCertPem?: string;
  clientKeyPem?: string;
  /** SNI / verification name when the server address is an IP the certificate does not name. */
  tlsServerName?: string;
}

export const KubeconfigCredentialInput = z
  .object({
    kubeconfig: z
      .string()
      .min(1)
      .max(256 * 1024),
  })
  .strict();
export const TokenCredentialInput = z
  .object({
    server: z.string().min(1).max(2048),
    /** PEM, or base64 of PEM as in a kubeconfig's certificate-authority-data. */
    ca_data: z
      .string()
      .min(1)
      .max(256 * 1024)
      .optional(),
    token: z
      .string()
      .min(1)
      .max(16 * 1024),
  })
  .strict();
export const CredentialInput = z.union([KubeconfigCredentialInput, TokenCredentialInput]);
export type CredentialInput = z.infer<typeof CredentialInput>;

const KC = "credential.kubeconfig";

/** Why a credential cannot be used; `field` is the dotted path of the offending input field. */
export class CredentialFormatError extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

function pemOrBase64(value: string, field: string, what = field): string {
  const trimmed = value.trim();
  if (trimmed.startsWith("-----BEGIN")) return `${trimmed}\n`;
  const decoded = Buffer.from(trimmed, "base64").toString("utf8").trim();
  if (!decoded.startsWith("-----BEGIN"))
    throw new CredentialFormatError(field, `${what} is neither PEM nor base64 of PEM`);
  return `${decoded}\n`;
}

function checkServer(server: string, field: string, what = field): string {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new CredentialFormatError(field, `${what} is not a URL`);
  }
  if (url.protocol !== "https:") throw new CredentialFormatError(field, `${what} must be an https:// URL`);
  if (url.username || url.password) throw new CredentialFormatError(field, `${what} must not carry user information`);
  if (url.search || url.hash) throw new CredentialFormatError(field, `${what} must not carry a query or fragment`);
  return url.toString().replace(/\/$/, "");
}

type Raw = Record<string, unknown>;
const asRecord = (v: unknown): Raw => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Raw) : {});
const named = (list: unknown, name: string, key: string): Raw | undefined => {
  if (!Array.isArray(list)) return undefined;
  const hit = list.find((e) => asRecord(e).name === name);
  return hit === undefined ? undefined : asRecord(asRecord(hit)[key]);
};

/** The current context's cluster and user of a kubeconfig, inline material only. */
function fromKubeconfig(text: string): ClusterCredential {
  let doc: Raw;
  try {
    doc = asRecord(parseYaml(text));
  } catch {
    throw new CredentialFormatError(KC, "kubeconfig is not valid YAML");
  }
  const contexts = doc.contexts;
  const currentName = typeof doc["current-context"] === "string" ? doc["current-context"] : undefined;
  const contextList = Array.isArray(contexts) ? contexts : [];
  const contextEntry = currentName
    ? named(contextList, currentName, "context")
    : contextList.length === 1
      ? asRecord(asRecord(contextList[0]).context)
      : undefined;
  if (!contextEntry) throw new CredentialFormatError(KC, "kubeconfig has no current context");
  const cluster =
    typeof contextEntry.cluster === "string" ? named(doc.clusters, contextEntry.cluster, "cluster") : undefined;
  if (!cluster) throw new CredentialFormatError(KC, "the current context names no cluster of the kubeconfig");
  const user = typeof contextEntry.user === "string" ? named(doc.users, contextEntry.user, "user") : undefined;
  if (!user) throw new CredentialFormatError(KC, "the current context names no user of the kubeconfig");

  for (const key of ["certificate-authority", "proxy-url"]) {
    if (cluster[key] !== undefined)
      throw new CredentialFormatError(KC, `cluster.${key} is not accepted; use inline data`);
  }
  if (cluster["insecure-skip-tls-verify"] === true) {
    throw new CredentialFormatError(KC, "insecure-skip-tls-verify is not accepted; give certificate-authority-data");
  }
  for (const key of [
    "exec",
    "auth-provider",
    "tokenFile",
    "client-certificate",
    "client-key",
    "username",
    "password",
    "as",
    "as-groups",
    "as-user-extra",
  ]) {
    if (user[key] !== undefined)
      throw new CredentialFormatError(KC, `user.${key} is not accepted; use a token or inline client certificate data`);
  }
  if (typeof cluster.server !== "string") throw new CredentialFormatError(KC, "cluster.server is missing");
  const cred: ClusterCredential = { server: checkServer(cluster.server, KC, "the kubeconfig's cluster.server") };
  if (typeof cluster["certificate-authority-data"] === "string") {
    cred.caPem = pemOrBase64(cluster["certificate-authority-data"], KC, "certificate-authority-data");
  }
  if (typeof cluster["tls-server-name"] === "string") cred.tlsServerName = cluster["tls-server-name"];
  if (typeof user.token === "string") cred.token = user.token;
  if (typeof user["client-certificate-data"] === "string" || typeof user["client-key-data"] === "string") {
    if (typeof user["client-certificate-data"] !== "string" || typeof user["client-key-data"] !== "string") {
      throw new CredentialFormatError(KC, "client-certificate-data and client-key-data go together");
    }
    cred.clientCertPem = pemOrBase64(user["client-certificate-data"], KC, "client-certificate-data");
    cred.clientKeyPem = pemOrBase64(user["client-key-data"], KC, "client-key-data");
  }
  if (!cred.token && !cred.clientCertPem)
    throw new CredentialFormatError(KC, "the user has neither a token nor client certificate data");
  return cred;
}

/** Registration input → the normalized credential; throws CredentialFormatError. */
export function normalizeCredential(input: CredentialInput): ClusterCredential {
  if ("kubeconfig" in input) return fromKubeconfig(input.kubeconfig);
  const cred: ClusterCredential = { server: checkServer(input.server, "credential.server"), token: input.token };
  if (input.ca_data) cred.caPem = pemOrBase64(input.ca_data, "credential.ca_data");
  return cred;
}

// --- Secret form: a kubeconfig with inline data only (the Cluster's credentialSecretRef.key) ---------

export const CREDENTIAL_SECRET_KEY = "kubeconfig";

/** The credential as a kubeconfig text; `parseStoredKubeconfig` reads it back. */
export function credentialToKubeconfigText(cred: ClusterCredential, name = "berth-target"): string {
  const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");
  const cluster: Record<string, unknown> = { server: cred.server };
  if (cred.caPem) cluster["certificate-authority-data"] = b64(cred.caPem);
  if (cred.tlsServerName) cluster["tls-server-name"] = cred.tlsServerName;
  const user: Record<string, unknown> = {};
  if (cred.token) user.token = cred.token;
  if (cred.clientCertPem) user["client-certificate-data"] = b64(cred.clientCertPem);
  if (cred.clientKeyPem) user["client-key-data"] = b64(cred.clientKeyPem);
  return stringifyYaml({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name, cluster }],
    users: [{ name, user }],
    contexts: [{ name, context: { cluster: name, user: name } }],
    "current-context": name,
  });
}

/** Secret `data` (base64 values) → the credential; the same rules as registration apply. */
export function credentialFromSecretData(
  data: Record<string, string> | undefined,
  key = CREDENTIAL_SECRET_KEY,
): ClusterCredential {
  const b64 = data?.[key];
  if (!b64) throw new Error(`the credential Secret has no key ${key}`);
  return fromKubeconfig(Buffer.from(b64, "base64").toString("utf8"));
}
