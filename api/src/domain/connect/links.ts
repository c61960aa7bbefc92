// The three connect links of a session, on its own cluster's session domain (there is no global session
// hostname): https://{session_domain}/proxy/{cr}/lab | /terminal | /code/ ?svc_cnx=<token>.
export const CONNECT_LINKS = ["lab", "terminal", "code"] as const;
export type ConnectLinkKind = (typeof CONNECT_LINKS)[number];

/** Path of a link under the gateway; `code/` keeps its slash (the editor resolves assets relative to it). */
export function connectPath(cr: string, kind: ConnectLinkKind): string {
  const tail = kind === "code" ? "code/" : kind;
  return `/proxy/${encodeURIComponent(cr)}/${tail}`;
}

export function connectUrl(sessionDomain: string, cr: string, kind: ConnectLinkKind, token: string): string {
  const url = new URL(`https://${sessionDomain}${connectPath(cr, kind)}`);
  url.searchParams.set("svc_cnx", token);
  return url.toString();
}
