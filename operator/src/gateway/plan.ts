// The gateway's decisions on a request before anything is waited for (gateway.ts): pure, from the URL and
// the headers. What the cookie says is cookie.ts' verdictOn; what to answer when it says no is here too.
import type { CookieVerdict } from "./cookie.ts";
import { type Page, pages } from "./pages.ts";
import { routeOf, tokenOf } from "./paths.ts";

export type RequestPlan =
  | { kind: "health" }
  | { kind: "page"; page: Page }
  /** 308 to the session's root with a slash, the query kept. */
  | { kind: "redirect"; location: string }
  /** A connect link: the token is redeemed with the control plane. */
  | { kind: "redeem"; cr: string; token: string }
  /** A request for the session: the cookie decides. */
  | { kind: "cookie"; cr: string };

export function planRequest(url: string): RequestPlan {
  const route = routeOf(url);
  if (route.kind === "health") return { kind: "health" };
  if (route.kind === "unknown") return { kind: "page", page: pages.notFound() };
  if (route.kind === "add-slash") {
    const q = url.indexOf("?");
    return { kind: "redirect", location: `/proxy/${route.cr}/${q < 0 ? "" : url.slice(q)}` };
  }
  const token = tokenOf(url);
  if (token === "ambiguous")
    return { kind: "page", page: pages.badRequest("The link carries more than one svc_cnx token.") };
  if (token !== undefined) return { kind: "redeem", cr: route.cr, token };
  return { kind: "cookie", cr: route.cr };
}

export type UpgradePlan = { kind: "refuse"; status: number; reason: string } | { kind: "cookie"; cr: string };

/** A WebSocket upgrade: only to a session's path, and only from a page of the same host. */
export function planUpgrade(url: string, origin: string | undefined, host: string | undefined): UpgradePlan {
  const route = routeOf(url);
  if (route.kind !== "proxy") return { kind: "refuse", status: 404, reason: "not_a_session_path" };
  // Cross-site WebSocket hijacking: a page elsewhere must not open a socket with this user's cookie.
  if (origin !== undefined) {
    let originHost: string | undefined;
    try {
      originHost = new URL(origin).host;
    } catch {
      originHost = undefined;
    }
    if (originHost !== host) return { kind: "refuse", status: 403, reason: "cross_origin" };
  }
  return { kind: "cookie", cr: route.cr };
}

/** Why a refused cookie is refused, as the page's or the refused upgrade's reason. */
export function signedOutReason(verdict: Extract<CookieVerdict, { ok: false }>): "cookie_expired" | "no_cookie" {
  return verdict.why === "expired" ? "cookie_expired" : "no_cookie";
}
