import { describe, expect, it } from "vitest";
import { allowList } from "../internal/cidr.ts";
import { clientAddress } from "./clientAddress.ts";

const proxies = allowList(["10.0.0.0/8", "fd00::/8"]);

describe("the client address", () => {
  it.each([
    ["a direct peer, no header", "203.0.113.9", undefined, "203.0.113.9"],
    ["a direct peer's forged header is ignored", "203.0.113.9", "198.51.100.1", "203.0.113.9"],
    ["one trusted proxy: the address it appended", "10.1.2.3", "198.51.100.1", "198.51.100.1"],
    ["a client's own header sits left of what its proxy appended", "10.1.2.3", "1.1.1.1, 198.51.100.1", "198.51.100.1"],
    ["two trusted hops are skipped", "10.1.2.3", "198.51.100.1, 10.9.9.9", "198.51.100.1"],
    ["every hop trusted: the leftmost", "10.1.2.3", "10.4.4.4, 10.9.9.9", "10.4.4.4"],
    ["garbage in the header: the proxy that passed it", "10.1.2.3", "not-an-ip, 10.9.9.9", "10.9.9.9"],
    ["a trusted proxy with an empty header: itself", "10.1.2.3", "", "10.1.2.3"],
    ["IPv6 proxies", "fd00::1", "2001:db8::7", "2001:db8::7"],
    ["IPv4-mapped peers match IPv4 ranges", "::ffff:10.1.2.3", "198.51.100.1", "198.51.100.1"],
    ["repeated headers are one list", "10.1.2.3", ["1.1.1.1", "198.51.100.1"], "198.51.100.1"],
  ] as const)("%s", (_, peer, header, expected) => {
    expect(clientAddress(peer, header as string | string[] | undefined, proxies)).toBe(expected);
  });

  it("never reads the header without trusted ranges", () => {
    expect(clientAddress("10.1.2.3", "198.51.100.1", allowList([]))).toBe("10.1.2.3");
  });
});
