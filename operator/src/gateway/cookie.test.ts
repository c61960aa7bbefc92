import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  type CookieCheck,
  type CookieClaims,
  CookieHeaders,
  clearCookieHeader,
  cookieValues,
  openCookie,
  setCookieHeader,
  signCookie,
  verdictOn,
  withoutCookie,
} from "./cookie.ts";

const key = randomBytes(32);
/** The verdict on these `berth_cnx` values sent in one Cookie header, read by `headers` (a fresh reader by default). */
const checkCookies = (values: string[], keys: Buffer[], want: CookieCheck, headers = new CookieHeaders(keys)) =>
  verdictOn(headers.read(values.map((v) => `berth_cnx=${v}`).join("; ") || undefined), want);
const claims = (over: Partial<CookieClaims> = {}): CookieClaims => ({
  s: "ses_a",
  c: "s-a",
  u: "usr_alice",
  k: "clu_a",
  i: 1000,
  e: 1600,
  ...over,
});
const want = { cr: "s-a", clusterId: "clu_a", nowSeconds: 1100 };

describe("gateway cookie", () => {
  it("opens with the key that signed it and with no other", () => {
    const v = signCookie(claims(), key);
    expect(openCookie(v, [key])).toEqual(claims());
    expect(openCookie(v, [randomBytes(32)])).toBeUndefined();
  });

  it("opens with a previous key during rotation", () => {
    const old = randomBytes(32);
    expect(openCookie(signCookie(claims(), old), [key, old])).toEqual(claims());
  });

  it("refuses any change to its claims", () => {
    const v = signCookie(claims(), key);
    const [, sig] = v.split(".");
    const forged = `${Buffer.from(JSON.stringify(claims({ u: "usr_mallory" }))).toString("base64url")}.${sig}`;
    expect(openCookie(forged, [key])).toBeUndefined();
    expect(openCookie("garbage", [key])).toBeUndefined();
    expect(openCookie(`${v}x`, [key])).toBeUndefined();
  });

  it("opens only the session, and on the cluster, it was issued for", () => {
    expect(checkCookies([signCookie(claims(), key)], [key], want)).toMatchObject({ ok: true, renew: false });
    expect(checkCookies([signCookie(claims({ c: "s-b" }), key)], [key], want)).toEqual({ ok: false, why: "elsewhere" });
    expect(checkCookies([signCookie(claims({ k: "clu_b" }), key)], [key], want)).toEqual({
      ok: false,
      why: "elsewhere",
    });
    expect(checkCookies([], [key], want)).toEqual({ ok: false, why: "absent" });
  });

  it("expires, and asks for renewal past half its life", () => {
    const v = signCookie(claims(), key);
    expect(checkCookies([v], [key], { ...want, nowSeconds: 1299 })).toMatchObject({ ok: true, renew: false });
    expect(checkCookies([v], [key], { ...want, nowSeconds: 1301 })).toMatchObject({ ok: true, renew: true });
    expect(checkCookies([v], [key], { ...want, nowSeconds: 1600 })).toEqual({ ok: false, why: "expired" });
  });

  it("takes any valid one when several arrive", () => {
    const good = signCookie(claims(), key);
    expect(checkCookies(["junk", signCookie(claims({ c: "s-b" }), key), good], [key], want)).toMatchObject({
      ok: true,
    });
  });

  it("is HttpOnly, SameSite=Lax, scoped to the session's path, Secure over TLS", () => {
    const h = setCookieHeader("v", { cr: "s-a", maxAgeSeconds: 600, secure: true });
    expect(h).toBe("berth_cnx=v; Path=/proxy/s-a/; Max-Age=600; HttpOnly; SameSite=Lax; Secure");
    expect(setCookieHeader("v", { cr: "s-a", maxAgeSeconds: 600, secure: false })).not.toContain("Secure");
    expect(clearCookieHeader({ cr: "s-a", secure: true })).toContain("Max-Age=0");
  });

  it("is read from, and removed from, a Cookie header without touching the others", () => {
    const header = "a=1; berth_cnx=x.y; _xsrf=abc; berth_cnx=z.w";
    expect(cookieValues(header, "berth_cnx")).toEqual(["x.y", "z.w"]);
    expect(withoutCookie(header, "berth_cnx")).toBe("a=1; _xsrf=abc");
    expect(withoutCookie("berth_cnx=x", "berth_cnx")).toBeUndefined();
  });
});

describe("verified cookie cache", () => {
  it("remembers a signature, never a binding or an expiry", () => {
    const cache = new CookieHeaders([key], 2);
    const v = signCookie(claims(), key);
    expect(checkCookies([v], [key], want, cache)).toMatchObject({ ok: true });
    expect(checkCookies([v], [key], { ...want, cr: "s-b" }, cache)).toEqual({ ok: false, why: "elsewhere" });
    expect(checkCookies([v], [key], { ...want, nowSeconds: 1600 }, cache)).toEqual({ ok: false, why: "expired" });
    expect(checkCookies([`${v}x`], [key], want, cache)).toEqual({ ok: false, why: "bad" });
  });
});

describe("read Cookie headers", () => {
  it("remember a header's signature verdict, never a binding or an expiry", () => {
    const headers = new CookieHeaders([key]);
    const header = `_xsrf=abc; berth_cnx=${signCookie(claims(), key)}`;
    const read = headers.read(header);
    expect(headers.read(header)).toBe(read);
    expect(verdictOn(read, want)).toMatchObject({ ok: true, renew: false });
    expect(verdictOn(headers.read(header), { ...want, cr: "s-b" })).toEqual({ ok: false, why: "elsewhere" });
    expect(verdictOn(headers.read(header), { ...want, clusterId: "clu_b" })).toEqual({ ok: false, why: "elsewhere" });
    expect(verdictOn(headers.read(header), { ...want, nowSeconds: 1301 })).toMatchObject({ ok: true, renew: true });
    expect(verdictOn(headers.read(header), { ...want, nowSeconds: 1600 })).toEqual({ ok: false, why: "expired" });
  });

  it("judge as checkCookies does: absent, bad, or any valid one among several", () => {
    const headers = new CookieHeaders([key]);
    expect(verdictOn(headers.read(undefined), want)).toEqual({ ok: false, why: "absent" });
    expect(verdictOn(headers.read("theme=dark"), want)).toEqual({ ok: false, why: "absent" });
    expect(verdictOn(headers.read("berth_cnx=junk"), want)).toEqual({ ok: false, why: "bad" });
    const forged = signCookie(claims(), randomBytes(32));
    expect(verdictOn(headers.read(`berth_cnx=${forged}`), want)).toEqual({ ok: false, why: "bad" });
    const good = signCookie(claims({ s: "ses_good" }), key);
    const several = `berth_cnx=junk; berth_cnx=${signCookie(claims({ c: "s-b" }), key)}; berth_cnx=${good}`;
    expect(verdictOn(headers.read(several), want)).toMatchObject({ ok: true, claims: { s: "ses_good" } });
  });

  it("give the header to forward without the gateway's cookie", () => {
    const headers = new CookieHeaders([key]);
    const v = signCookie(claims(), key);
    expect(headers.read(`a=1; berth_cnx=${v}; _xsrf=abc`).forwarded).toBe("a=1; _xsrf=abc");
    expect(headers.read(`berth_cnx=${v}`).forwarded).toBeUndefined();
  });

  it("stay bounded", () => {
    const headers = new CookieHeaders([key], 2);
    const v = signCookie(claims(), key);
    const first = headers.read(`a=1; berth_cnx=${v}`);
    headers.read(`a=2; berth_cnx=${v}`);
    headers.read(`a=3; berth_cnx=${v}`);
    expect(headers.read(`a=1; berth_cnx=${v}`)).not.toBe(first);
    expect(verdictOn(headers.read(`a=1; berth_cnx=${v}`), want)).toMatchObject({ ok: true });
  });
});
