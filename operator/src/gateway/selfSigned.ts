// A self-signed serving certificate for a gateway of the local fleet (`npm start`, tests), made with
// node:crypto alone: a P-256 key and a minimal X.509 v3 certificate (DER written by hand below) with
// the names it serves as subjectAltName. In a real cluster the certificate comes from a Secret
// (cert-manager or the operator's own); this is only so a loopback gateway can speak TLS with no
// openssl binary and no extra package.
import { createPublicKey, generateKeyPairSync, randomBytes, sign, X509Certificate } from "node:crypto";
import { isIP } from "node:net";

export interface SelfSignedOptions {
  /** DNS names and IP addresses the certificate is for (the session domain's host, 127.0.0.1, localhost). */
  names: string[];
  /** Subject common name; defaults to the first name. */
  commonName?: string;
  /** Default 90 days. */
  validDays?: number;
  now?: Date;
}

export interface CertificatePair {
  certPem: string;
  keyPem: string;
}

export function selfSignedCertificate(opts: SelfSignedOptions): CertificatePair {
  if (opts.names.length === 0) throw new Error("a certificate needs at least one name");
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const now = opts.now ?? new Date();
  const notBefore = new Date(now.getTime() - 60 * 60 * 1000); // clocks of the same machine still skew a little
  const notAfter = new Date(now.getTime() + (opts.validDays ?? 90) * 86_400_000);
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f; // positive INTEGER
  const name = seq(set(seq(oid("2.5.4.3"), utf8(opts.commonName ?? opts.names[0] ?? "localhost"))));
  const sigAlg = seq(oid("1.2.840.10045.4.3.2")); // ecdsa-with-SHA256, no parameters
  const altNames = opts.names.map((n) => {
    const v = isIP(n);
    if (v === 4) return tagged(0x87, Buffer.from(n.split(".").map(Number)));
    if (v === 6) return tagged(0x87, ipv6Bytes(n));
    return tagged(0x82, Buffer.from(n, "ascii"));
  });
  const extensions = seq(
    seq(oid("2.5.29.17"), octets(seq(...altNames))), // subjectAltName
    seq(oid("2.5.29.19"), bool(true), octets(seq())), // basicConstraints: critical, CA:FALSE
    seq(oid("2.5.29.15"), bool(true), octets(bitString(Buffer.from([0x80]), 7))), // keyUsage: digitalSignature
    seq(oid("2.5.29.37"), octets(seq(oid("1.3.6.1.5.5.7.3.1")))), // extKeyUsage: serverAuth
  );
  const tbs = seq(
    tagged(0xa0, integer(Buffer.from([2]))), // v3
    integer(serial),
    sigAlg,
    name,
    seq(time(notBefore), time(notAfter)),
    name,
    publicKey.export({ type: "spki", format: "der" }),
    tagged(0xa3, extensions),
  );
  const signature = sign("sha256", tbs, privateKey); // DER ECDSA-Sig-Value, as X.509 wants
  const der = seq(tbs, sigAlg, bitString(signature, 0));
  const certPem = `-----BEGIN CERTIFICATE-----\n${der.toString("base64").replace(/.{1,64}/g, "$&\n")}-----END CERTIFICATE-----\n`;
  const keyPem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  // Parse it back: a malformed encoding fails here, at start-up, not in a browser.
  const parsed = new X509Certificate(certPem);
  if (!parsed.verify(createPublicKey(keyPem))) throw new Error("self-signed certificate does not verify");
  return { certPem, keyPem };
}

// --- DER, only what the certificate above needs ---

function tagged(tag: number, body: Buffer): Buffer {
  const n = body.length;
  let len: Buffer;
  if (n < 0x80) len = Buffer.from([n]);
  else {
    const bytes: number[] = [];
    for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
    len = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), len, body]);
}
const seq = (...items: Buffer[]): Buffer => tagged(0x30, Buffer.concat(items));
const set = (...items: Buffer[]): Buffer => tagged(0x31, Buffer.concat(items));
const octets = (b: Buffer): Buffer => tagged(0x04, b);
const utf8 = (s: string): Buffer => tagged(0x0c, Buffer.from(s, "utf8"));
const bool = (v: boolean): Buffer => tagged(0x01, Buffer.from([v ? 0xff : 0]));
const bitString = (b: Buffer, unused: number): Buffer => tagged(0x03, Buffer.concat([Buffer.from([unused]), b]));

function integer(b: Buffer): Buffer {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0 && ((b[i + 1] ?? 0) & 0x80) === 0) i++;
  const body = b.subarray(i);
  return tagged(0x02, (body[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), body]) : body);
}

function oid(dotted: string): Buffer {
  const parts = dotted.split(".").map(Number);
  const out: number[] = [(parts[0] ?? 0) * 40 + (parts[1] ?? 0)];
  for (const p of parts.slice(2)) {
    const bytes: number[] = [p & 0x7f];
    for (let v = p >>> 7; v > 0; v >>>= 7) bytes.unshift((v & 0x7f) | 0x80);
    out.push(...bytes);
  }
  return tagged(0x06, Buffer.from(out));
}

/** UTCTime until 2049, GeneralizedTime from 2050 (RFC 5280 §4.1.2.5). */
function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, "").slice(0, 14); // YYYYMMDDHHMMSS
  return d.getUTCFullYear() < 2050
    ? tagged(0x17, Buffer.from(`${iso.slice(2)}Z`, "ascii"))
    : tagged(0x18, Buffer.from(`${iso}Z`, "ascii"));
}

function ipv6Bytes(ip: string): Buffer {
  const [head = "", tail = ""] = ip.split("::");
  const h = head ? head.split(":") : [];
  const t = ip.includes("::") && tail ? tail.split(":") : [];
  const groups = [...h, ...Array(8 - h.length - t.length).fill("0"), ...t];
  const b = Buffer.alloc(16);
  for (const [i, g] of groups.entries()) b.writeUInt16BE(Number.parseInt(g || "0", 16), i * 2);
  return b;
}
