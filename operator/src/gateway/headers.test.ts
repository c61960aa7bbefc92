import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { CookieHeaders } from "./cookie.ts";
import { carriesBody, cookieHeader, forwardedRequestHeaders, pinCookie, responseHeaders } from "./headers.ts";

const pairs = (raw: string[]): Array<[string, string]> =>
  Array.from({ length: raw.length / 2 }, (_, i) => [raw[2 * i] as string, raw[2 * i + 1] as string]);

describe("request headers on their way to the session", () => {
  // Cookie headers as the gateway reads them: node joins several with "; ".
  const cookiesOf = (raw: string[]) =>
    new CookieHeaders([randomBytes(32)]).read(raw.filter((_, i) => raw[i - 1] === "Cookie").join("; ") || undefined);
  const forwarded = (raw: string[], secure = true) =>
    pairs(forwardedRequestHeaders(raw, { remote: "10.0.0.9", secure, cr: "s-a", cookies: cookiesOf(raw) }));

  it("drop hop-by-hop headers, and those the Connection header names", () => {
    const out = forwarded([
      "Host",
      "gw.example",
      "Connection",
      "keep-alive, X-Secret-Hop",
      "Keep-Alive",
      "timeout=5",
      "X-Secret-Hop",
      "1",
      "Transfer-Encoding",
      "chunked",
      "Expect",
      "100-continue",
      "Accept",
      "text/html",
    ]);
    expect(out.map(([n]) => n.toLowerCase())).toEqual([
      "host",
      "accept",
      "x-forwarded-for",
      "x-forwarded-proto",
      "x-forwarded-host",
      "x-forwarded-prefix",
    ]);
  });

  it("never carry the gateway's cookie, in any Cookie header", () => {
    const out = forwarded(["Cookie", "berth_cnx=secret; theme=dark", "Cookie", "berth_cnx=other"]);
    expect(out.filter(([n]) => n === "Cookie")).toEqual([["Cookie", "theme=dark"]]);
  });

  it("send the Cookie headers already read as one, in place of the first", () => {
    const raw = ["Cookie", "berth_cnx=secret; theme=dark", "Accept", "*/*", "Cookie", "berth_cnx=other; lang=en"];
    const out = pairs(
      forwardedRequestHeaders(raw, {
        remote: "10.0.0.9",
        secure: true,
        cr: "s-a",
        cookies: { forwarded: "theme=dark; lang=en" },
      }),
    );
    expect(out.slice(0, 2)).toEqual([
      ["Cookie", "theme=dark; lang=en"],
      ["Accept", "*/*"],
    ]);
    const none = forwardedRequestHeaders(raw, {
      remote: "10.0.0.9",
      secure: true,
      cr: "s-a",
      cookies: { forwarded: undefined },
    });
    expect(none.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase())).not.toContain("cookie");
  });

  it("say where the request came from, and let the browser set none of the X-Forwarded headers but -For", () => {
    const out = new Map(
      forwarded([
        "Host",
        "gw.example",
        "X-Forwarded-For",
        "192.0.2.1",
        "X-Forwarded-Host",
        "evil.example",
        "X-Forwarded-Proto",
        "gopher",
        "X-Forwarded-Prefix",
        "/proxy/s-b",
      ]),
    );
    expect(out.get("X-Forwarded-For")).toBe("192.0.2.1, 10.0.0.9");
    expect(out.get("X-Forwarded-Host")).toBe("gw.example");
    expect(out.get("X-Forwarded-Proto")).toBe("https");
    expect(out.get("X-Forwarded-Prefix")).toBe("/proxy/s-a");
    expect([...out.keys()].filter((n) => n.toLowerCase() === "x-forwarded-host")).toHaveLength(1);
  });

  it("name no forwarded host when the request had no Host (HTTP/1.0)", () => {
    const out = forwarded(["X-Forwarded-Host", "evil.example"], false);
    expect(out.find(([n]) => n.toLowerCase() === "x-forwarded-host")).toBeUndefined();
    expect(out).toContainEqual(["X-Forwarded-Proto", "http"]);
  });
});

describe("response headers on their way to the browser", () => {
  it("pin the session's cookies to its path, drop hop-by-hop headers and add a renewed gateway cookie", () => {
    const raw = [
      Buffer.from("Content-Type"),
      Buffer.from("text/plain"),
      Buffer.from("Connection"),
      Buffer.from("keep-alive"),
      Buffer.from("Keep-Alive"),
      Buffer.from("timeout=5"),
      Buffer.from("Set-Cookie"),
      Buffer.from("a=1; Path=/; Domain=gw.example; HttpOnly"),
      Buffer.from("Set-Cookie"),
      Buffer.from("b=2; Path=/proxy/s-a/lab"),
    ];
    expect(pairs(responseHeaders(raw, "s-a", "berth_cnx=new"))).toEqual([
      ["Content-Type", "text/plain"],
      ["Set-Cookie", "a=1; HttpOnly; Path=/proxy/s-a/"],
      ["Set-Cookie", "b=2; Path=/proxy/s-a/lab"],
      ["Set-Cookie", "berth_cnx=new"],
    ]);
  });

  it("keep header bytes as they came (latin1 in, latin1 out)", () => {
    const value = Buffer.from([0x63, 0x61, 0x66, 0xe9]); // "café" in latin1
    const out = responseHeaders([Buffer.from("X-Name"), value], "s-a");
    expect(Buffer.from(out[1] as string, "latin1")).toEqual(value);
  });

  it("pin a cookie without a Path, or with one outside the session, to the session's prefix", () => {
    expect(pinCookie("x=1", "s-a")).toBe("x=1; Path=/proxy/s-a/");
    expect(pinCookie("x=1; path=/proxy/s-b/", "s-a")).toBe("x=1; Path=/proxy/s-a/");
  });
});

describe("reading raw headers", () => {
  it("joins several Cookie headers as node:http does", () => {
    expect(cookieHeader(["cookie", "a=1", "Accept", "*/*", "Cookie", "b=2"])).toBe("a=1; b=2");
    expect(cookieHeader(["Accept", "*/*"])).toBeUndefined();
  });

  it("tells a request with a body from one without", () => {
    expect(carriesBody(["Host", "x"])).toBe(false);
    expect(carriesBody(["Content-Length", "0"])).toBe(false);
    expect(carriesBody(["content-length", "12"])).toBe(true);
    expect(carriesBody(["Transfer-Encoding", "chunked"])).toBe(true);
  });
});
