import { describe, expect, it } from "vitest";
import { guard, matchRoute, pathFor, safeNext } from "./routes.ts";

const signedOut = { signedIn: false, mustChangePassword: false, isAdmin: false };
const member = { signedIn: true, mustChangePassword: false, isAdmin: false };
const mustChange = { signedIn: true, mustChangePassword: true, isAdmin: true };
const admin = { signedIn: true, mustChangePassword: false, isAdmin: true };

describe("routes", () => {
  it("match deep links with their parameters, static segments first", () => {
    expect(matchRoute("/sessions/ses_abc").route.name).toBe("session-detail");
    expect(matchRoute("/sessions/ses_abc").params).toEqual({ sessionId: "ses_abc" });
    expect(matchRoute("/sessions/new").route.name).toBe("session-new");
    expect(matchRoute("/sessions/").route.name).toBe("sessions");
    expect(matchRoute("/nope").route.name).toBe("not-found");
    expect(matchRoute("/credits/wallets/wal_1").params).toEqual({ walletId: "wal_1" });
    expect(matchRoute("/credits/requests").route.name).toBe("credits-requests");
    expect(pathFor("credits-wallet", { walletId: "wal_1" }, { kind: "charge" })).toBe(
      "/credits/wallets/wal_1?kind=charge",
    );
  });

  it("send a signed-out visitor to the login page and keep their place in ?next", () => {
    const g = guard(matchRoute("/sessions/ses_abc", "?tab=logs"), signedOut);
    expect(g).toEqual({ kind: "redirect", to: pathFor("login", {}, { next: "/sessions/ses_abc?tab=logs" }) });
  });

  it("let nothing but the password page through while the password must be changed", () => {
    expect(guard(matchRoute("/sessions"), mustChange)).toEqual({ kind: "redirect", to: "/password?next=%2Fsessions" });
    expect(guard(matchRoute("/admin/users"), mustChange).kind).toBe("redirect");
    expect(guard(matchRoute("/password"), mustChange)).toEqual({ kind: "allow" });
  });

  it("keep members out of the admin pages and send signed-in users from the login page to ?next", () => {
    expect(guard(matchRoute("/admin/clusters"), member)).toEqual({ kind: "redirect", to: "/dashboard" });
    expect(guard(matchRoute("/admin/clusters"), admin)).toEqual({ kind: "allow" });
    expect(guard(matchRoute("/login", "?next=/queue"), member)).toEqual({ kind: "redirect", to: "/queue" });
  });

  it("open the sign-up page to visitors only, and keep the settings pages for administrators", () => {
    expect(guard(matchRoute("/signup"), signedOut)).toEqual({ kind: "allow" });
    expect(guard(matchRoute("/signup"), member)).toEqual({ kind: "redirect", to: "/dashboard" });
    expect(guard(matchRoute("/admin/settings"), member)).toEqual({ kind: "redirect", to: "/dashboard" });
    expect(guard(matchRoute("/admin/signups"), admin)).toEqual({ kind: "allow" });
    expect(guard(matchRoute("/admin/settings"), signedOut).kind).toBe("redirect");
    expect(safeNext("/signup")).toBe("/dashboard");
  });

  it("land a signed-in user on the dashboard", () => {
    expect(guard(matchRoute("/"), member)).toEqual({ kind: "redirect", to: "/dashboard" });
    expect(matchRoute("/dashboard").route.name).toBe("dashboard");
  });

  it("never follow ?next off the site", () => {
    expect(safeNext("//evil.example/x")).toBe("/dashboard");
    expect(safeNext("https://evil.example")).toBe("/dashboard");
    expect(safeNext("/\\evil.example")).toBe("/dashboard");
    expect(safeNext("/sessions/a?x=1")).toBe("/sessions/a?x=1");
  });
});
