import { describe, expect, it } from "vitest";
import { allowList, CidrError } from "./cidr.ts";

describe("the internal plane's source-range gate", () => {
  it("admits IPv4 peers inside a range and refuses those outside", () => {
    const a = allowList(["10.0.0.0/8", "127.0.0.1/32"]);
    expect(a.allows("10.1.2.3")).toBe(true);
    expect(a.allows("127.0.0.1")).toBe(true);
    expect(a.allows("127.0.0.2")).toBe(false);
    expect(a.allows("192.168.0.1")).toBe(false);
  });

  it("treats an IPv4 peer seen as ::ffff:a.b.c.d like the IPv4 address", () => {
    const a = allowList(["127.0.0.0/8"]);
    expect(a.allows("::ffff:127.0.0.1")).toBe(true);
    expect(a.allows("::FFFF:127.9.9.9")).toBe(true);
    expect(a.allows("::ffff:10.0.0.1")).toBe(false);
  });

  it("matches IPv6 ranges", () => {
    const a = allowList(["fd00::/8", "::1/128"]);
    expect(a.allows("fd12:3456::1")).toBe(true);
    expect(a.allows("::1")).toBe(true);
    expect(a.allows("fe80::1%eth0")).toBe(false);
    expect(a.allows("2001:db8::1")).toBe(false);
  });

  it("refuses a peer without an address and anything that is not an address", () => {
    const a = allowList(["0.0.0.0/0"]);
    expect(a.allows(undefined)).toBe(false);
    expect(a.allows("not-an-ip")).toBe(false);
    expect(a.allows("1.2.3.4")).toBe(true);
  });

  it("rejects malformed ranges instead of ignoring them", () => {
    expect(() => allowList(["10.0.0.0"])).toThrow(CidrError);
    expect(() => allowList(["10.0.0.0/33"])).toThrow(CidrError);
    expect(() => allowList(["::/129"])).toThrow(CidrError);
    expect(() => allowList(["example.com/8"])).toThrow(CidrError);
  });
});
