import { X509Certificate } from "node:crypto";
import { once } from "node:events";
import { createServer, request } from "node:https";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { selfSignedCertificate } from "./selfSigned.ts";

describe("self-signed gateway certificate", () => {
  it("names every host and address it was made for", () => {
    const { certPem } = selfSignedCertificate({ names: ["sessions.local", "127.0.0.1", "::1"] });
    const c = new X509Certificate(certPem);
    expect(c.checkHost("sessions.local")).toBe("sessions.local");
    expect(c.checkIP("127.0.0.1")).toBe("127.0.0.1");
    expect(c.checkIP("::1")).toBe("::1");
    expect(c.checkHost("other.local")).toBeUndefined();
    expect(c.ca).toBe(false);
  });

  it("is accepted by a TLS client that trusts exactly it", async () => {
    const pair = selfSignedCertificate({ names: ["127.0.0.1", "localhost"] });
    const server = createServer({ cert: pair.certPem, key: pair.keyPem }, (_req, res) => res.end("hello over tls"));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    try {
      const port = (server.address() as AddressInfo).port;
      const body = await new Promise<string>((resolve, reject) => {
        request({ host: "127.0.0.1", port, path: "/", ca: pair.certPem }, (res) => {
          let s = "";
          res.on("data", (c) => (s += c));
          res.on("end", () => resolve(s));
        })
          .on("error", reject)
          .end();
      });
      expect(body).toBe("hello over tls");
    } finally {
      server.close();
    }
  });

  it("writes validity past 2049 as GeneralizedTime", () => {
    const { certPem } = selfSignedCertificate({
      names: ["x.test"],
      now: new Date("2049-12-01T00:00:00Z"),
      validDays: 90,
    });
    expect(new Date(new X509Certificate(certPem).validTo).getUTCFullYear()).toBe(2050);
  });
});
