import { describe, expect, it } from "vitest";
import { routeOf, tokenOf, withoutToken } from "./paths.ts";

describe("gateway routes", () => {
  it.each([
    ["/proxy/s-a/lab", { kind: "proxy", cr: "s-a", rest: "/lab" }],
    ["/proxy/s-a/code/?folder=/home", { kind: "proxy", cr: "s-a", rest: "/code/" }],
    ["/proxy/s-a/", { kind: "proxy", cr: "s-a", rest: "/" }],
    ["/proxy/s-a", { kind: "add-slash", cr: "s-a" }],
    ["/healthz", { kind: "health" }],
    ["/proxy/S-A/lab", { kind: "unknown" }],
    ["/proxy/-a/lab", { kind: "unknown" }],
    ["/proxy/../etc", { kind: "unknown" }],
    ["/lab", { kind: "unknown" }],
  ])("%s is %j", (url, route) => {
    expect(routeOf(url)).toEqual(route);
  });

  it("finds the token, and refuses two", () => {
    expect(tokenOf("/proxy/s-a/lab?svc_cnx=cnx_1")).toBe("cnx_1");
    expect(tokenOf("/proxy/s-a/lab")).toBeUndefined();
    expect(tokenOf("/proxy/s-a/lab?svc_cnx=1&svc_cnx=2")).toBe("ambiguous");
  });

  it("finds a token under an encoded name, and none in queries without one", () => {
    expect(tokenOf("/proxy/s-a/lab?svc%5Fcnx=cnx_1")).toBe("cnx_1");
    expect(tokenOf("/proxy/s-a/lab?%73vc_cnx=cnx_1&a=1")).toBe("cnx_1");
    expect(tokenOf("/proxy/s-a/lab?svc_cnx=1&svc%5fcnx=2")).toBe("ambiguous");
    expect(tokenOf("/proxy/s-a/api/contents?content=1&hash=0&_=1732270000")).toBeUndefined();
    expect(tokenOf("/proxy/s-a/files/a.txt?svc+cnx=1&b=%2F")).toBeUndefined();
    expect(tokenOf("/proxy/s-a/lab?")).toBeUndefined();
  });

  it("drops the token and keeps everything else as it was", () => {
    expect(withoutToken("/proxy/s-a/lab?svc_cnx=cnx_1")).toBe("/proxy/s-a/lab");
    expect(withoutToken("/proxy/s-a/lab?a=1&svc_cnx=cnx_1&b=%2F")).toBe("/proxy/s-a/lab?a=1&b=%2F");
    expect(withoutToken("/proxy/s-a/code/")).toBe("/proxy/s-a/code/");
  });
});
