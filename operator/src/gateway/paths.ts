// Which request is which: /proxy/{cr}/… for a session, /healthz for probes, anything else is not ours.
// `{cr}` is a Kubernetes object name (DNS-1123 label), so it can be used in a Service host name and a
// cookie Path as it is.

const PROXY = /^\/proxy\/([a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?)(\/.*)?$/;
export const TOKEN_PARAM = "svc_cnx";

export type Route =
  | { kind: "proxy"; cr: string /** path after /proxy/{cr}, starting with "/" */; rest: string }
  | { kind: "add-slash"; cr: string }
  | { kind: "health" }
  | { kind: "unknown" };

/** `rawUrl` is the request target as received (path and query). */
export function routeOf(rawUrl: string): Route {
  const q = rawUrl.indexOf("?");
  const path = q < 0 ? rawUrl : rawUrl.slice(0, q);
  if (path === "/healthz" || path === "/readyz") return { kind: "health" };
  const m = PROXY.exec(path);
  if (!m) return { kind: "unknown" };
  const cr = m[1] as string;
  if (m[2] === undefined) return { kind: "add-slash", cr };
  return { kind: "proxy", cr, rest: m[2] };
}

/** The token in the query, when there is exactly one. */
export function tokenOf(rawUrl: string): string | undefined | "ambiguous" {
  const q = rawUrl.indexOf("?");
  if (q < 0) return undefined;
  const query = rawUrl.slice(q + 1);
  // Most proxied requests have a query (JupyterLab's API calls, cache busters) and no token: skip parsing
  // it. Without a '%' every name decodes to itself ('+' only to a space), so no "svc_cnx" text, no token;
  // an encoded name (svc%5Fcnx) still goes to the parser and is found (never forwarded to the session).
  if (!query.includes(TOKEN_PARAM) && !query.includes("%")) return undefined;
  const all = new URLSearchParams(query).getAll(TOKEN_PARAM);
  if (all.length === 0) return undefined;
  return all.length === 1 ? all[0] : "ambiguous";
}

/** The same target without svc_cnx (other parameters keep their order and encoding). */
export function withoutToken(rawUrl: string): string {
  const q = rawUrl.indexOf("?");
  if (q < 0) return rawUrl;
  const kept = rawUrl
    .slice(q + 1)
    .split("&")
    .filter((p) => p !== "" && decodeURIComponentSafe(p.split("=")[0] ?? "") !== TOKEN_PARAM);
  return kept.length ? `${rawUrl.slice(0, q)}?${kept.join("&")}` : rawUrl.slice(0, q);
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, " "));
  } catch {
    return s;
  }
}
