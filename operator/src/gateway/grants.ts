// What the control plane says about a person and a session, and the cookie that carries it: the cookie
// a grant signs, a renewal asked once per session and person however many requests wait on it, and the
// page that says why a session has no upstream.
import { type CookieClaims, clearCookieHeader, setCookieHeader, signCookie } from "./cookie.ts";
import { type Page, pages } from "./pages.ts";
import type { ConnectVerifier, Grant, Refusal, VerifyOutcome } from "./verifier.ts";

export interface SessionGrantsDeps {
  clusterId: string;
  verifier: ConnectVerifier;
  /** The first signs. */
  keys: Buffer[];
  ttlSeconds: number;
  secure: boolean;
  nowSeconds(): number;
}

export class SessionGrants {
  readonly #d: SessionGrantsDeps;
  readonly #renewals = new Map<string, Promise<VerifyOutcome>>();

  constructor(d: SessionGrantsDeps) {
    this.#d = d;
  }

  get verifier(): ConnectVerifier {
    return this.#d.verifier;
  }

  /** The Set-Cookie header of a fresh cookie for the grant. */
  cookieFor(g: Grant): string {
    const { clusterId, keys, ttlSeconds, secure } = this.#d;
    const i = this.#d.nowSeconds();
    return setCookieHeader(
      signCookie({ s: g.sessionId, c: g.crName, u: g.userId, k: clusterId, i, e: i + ttlSeconds }, keys[0] as Buffer),
      { cr: g.crName, maxAgeSeconds: ttlSeconds, secure },
    );
  }

  clearCookie(cr: string): string {
    return clearCookieHeader({ cr, secure: this.#d.secure });
  }

  pageOf(r: Refusal): Page {
    if (r.reason === "session_not_running") return pages.notRunning(r.phase);
    if (r.reason === "session_gone" || r.code === "not_found") return pages.gone();
    return pages.refused(r.reason, r.message);
  }

  /** Why is there no upstream? Ask the control plane; a page either way. */
  async explain(claims: CookieClaims): Promise<Page> {
    const out = await this.#d.verifier.check({ cr: claims.c, sessionId: claims.s, userId: claims.u });
    if (out.kind === "refused") return this.pageOf(out.refusal);
    return pages.unreachable();
  }

  renew(claims: CookieClaims): Promise<VerifyOutcome> {
    const k = `${claims.s}\u0000${claims.u}`;
    let p = this.#renewals.get(k);
    if (!p) {
      p = this.#d.verifier
        .check({ cr: claims.c, sessionId: claims.s, userId: claims.u })
        .finally(() => this.#renewals.delete(k));
      this.#renewals.set(k, p);
    }
    return p;
  }
}
