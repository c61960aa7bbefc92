import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import {
  CredentialFormatError,
  credentialFromSecretData,
  credentialToKubeconfigText,
  normalizeCredential,
} from "./credential.ts";

const CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----";
const b64 = (s: string) => Buffer.from(s).toString("base64");

function kubeconfig(
  user: Record<string, unknown>,
  cluster: Record<string, unknown> = {
    server: "https://gpu-a.example.com:6443",
    "certificate-authority-data": b64(CA),
  },
) {
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "c", cluster }],
    users: [{ name: "u", user }],
    contexts: [{ name: "ctx", context: { cluster: "c", user: "u" } }],
    "current-context": "ctx",
  });
}

describe("normalizing a registration credential", () => {
  it("takes server, CA and token, the CA as PEM or as base64 of PEM", () => {
    expect(normalizeCredential({ server: "https://10.0.0.1:6443/", ca_data: CA, token: "t" })).toEqual({
      server: "https://10.0.0.1:6443",
      caPem: `${CA}\n`,
      token: "t",
    });
    expect(normalizeCredential({ server: "https://10.0.0.1:6443", ca_data: b64(CA), token: "t" }).caPem).toBe(
      `${CA}\n`,
    );
  });

  it("takes the current context of a kubeconfig with inline data", () => {
    expect(normalizeCredential({ kubeconfig: kubeconfig({ token: "abc" }) })).toEqual({
      server: "https://gpu-a.example.com:6443",
      caPem: `${CA}\n`,
      token: "abc",
    });
    const cert = normalizeCredential({
      kubeconfig: kubeconfig({
        "client-certificate-data": b64(CA),
        "client-key-data": b64("-----BEGIN PRIVATE KEY-----\nk\n-----END PRIVATE KEY-----"),
      }),
    });
    expect(cert.clientCertPem).toContain("BEGIN CERTIFICATE");
    expect(cert.clientKeyPem).toContain("BEGIN PRIVATE KEY");
  });

  it.each([
    ["an exec plugin", { exec: { command: "/bin/sh" } }, undefined],
    ["an auth provider", { "auth-provider": { name: "gcp" } }, undefined],
    ["a token file", { tokenFile: "/var/run/secrets/token" }, undefined],
    ["a client key on disk", { "client-certificate": "/c.pem", "client-key": "/k.pem" }, undefined],
    ["impersonation", { token: "t", as: "system:admin" }, undefined],
    ["a CA on disk", { token: "t" }, { server: "https://a:6443", "certificate-authority": "/etc/ca.pem" }],
    ["TLS verification off", { token: "t" }, { server: "https://a:6443", "insecure-skip-tls-verify": true }],
    ["plain http", { token: "t" }, { server: "http://a:6443" }],
    ["a proxy", { token: "t" }, { server: "https://a:6443", "proxy-url": "http://proxy:3128" }],
    ["no way to authenticate", {}, undefined],
  ])("refuses a kubeconfig with %s", (_what, user, cluster) => {
    expect(() => normalizeCredential({ kubeconfig: kubeconfig(user, cluster) })).toThrow(CredentialFormatError);
  });

  it("refuses a server that is not an https URL, and a CA that is not PEM", () => {
    for (const server of ["gpu-a:6443", "http://gpu-a:6443", "https://user:pw@gpu-a:6443", "https://gpu-a:6443/?x=1"]) {
      expect(() => normalizeCredential({ server, token: "t" }), server).toThrow(CredentialFormatError);
    }
    expect(() => normalizeCredential({ server: "https://a", ca_data: "not a certificate", token: "t" })).toThrow(
      /ca_data is neither PEM/,
    );
  });

  it("round-trips through the Secret's kubeconfig", () => {
    const cred = { server: "https://a:6443", caPem: `${CA}\n`, token: "t", tlsServerName: "kubernetes" };
    const data = { kubeconfig: b64(credentialToKubeconfigText(cred)) };
    expect(credentialFromSecretData(data)).toEqual(cred);
  });
});
