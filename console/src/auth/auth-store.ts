// The signed-in state: the bearer token (short-lived, no refresh), when it expires, whether the password
// must be changed first, and the account (GET /api/v1/auth/me). Kept in sessionStorage so a reload keeps
// the tab signed in; another tab signs in on its own.
import type { Operations } from "../api/openapi.gen.ts";

type TokenResponse = Operations["login"]["response"];
type Me = Operations["getMe"]["response"];

export type SignOutReason = "user" | "expired" | "revoked";

interface Stored {
  token: string;
  expiresAt: number;
  mustChangePassword: boolean;
  user: { id: string; email: string };
}

const KEY = "berth.auth";

export class AuthStore extends EventTarget {
  #s: Stored | undefined;
  #me: Me | undefined;
  #meError: unknown;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Why the last sign-out happened; the login page explains "expired". */
  lastSignOut: SignOutReason | undefined;
  readonly #now: () => number;
  readonly #storage: Storage | undefined;

  constructor(opts: { now?: () => number; storage?: Storage } = {}) {
    super();
    this.#now = opts.now ?? Date.now;
    this.#storage = opts.storage ?? globalThis.sessionStorage;
    try {
      const raw = this.#storage?.getItem(KEY);
      const s = raw ? (JSON.parse(raw) as Stored) : undefined;
      if (s && typeof s.token === "string" && s.expiresAt > this.#now()) this.#set(s);
    } catch {
      this.#storage?.removeItem(KEY);
    }
  }

  get token(): string | undefined {
    return this.#s?.token;
  }
  get signedIn(): boolean {
    return !!this.#s;
  }
  get mustChangePassword(): boolean {
    return !!this.#s?.mustChangePassword;
  }
  get email(): string | undefined {
    return this.#s?.user.email;
  }
  get userId(): string | undefined {
    return this.#s?.user.id;
  }
  get expiresAt(): number | undefined {
    return this.#s?.expiresAt;
  }
  get me(): Me | undefined {
    return this.#me;
  }
  /** Why the account did not load (not an auth failure: that signs out); undefined while it loads. */
  get meError(): unknown {
    return this.#meError;
  }
  get isSuperAdmin(): boolean {
    return !!this.#me?.is_super_admin;
  }
  /** super_admin or admin of an organization: may open the admin pages (the API still decides). */
  get isAdmin(): boolean {
    return this.isSuperAdmin || !!this.#me?.memberships.some((m) => m.role === "org_admin");
  }

  /** After login or a password change: both answer a fresh token. */
  accept(r: TokenResponse): void {
    this.lastSignOut = undefined;
    this.#set({
      token: r.access_token,
      expiresAt: this.#now() + r.expires_in * 1000,
      mustChangePassword: r.must_change_password,
      user: r.user,
    });
  }

  setMe(me: Me): void {
    this.#me = me;
    this.#meError = undefined;
    this.#changed();
  }

  /** The account is (re)loading: pages wait for it, or show why it did not load (`meFailed`). */
  meLoading(): void {
    this.#meError = undefined;
    this.#changed();
  }

  meFailed(err: unknown): void {
    this.#meError = err;
    this.#changed();
  }

  signOut(reason: SignOutReason = "user"): void {
    if (!this.#s) return;
    this.lastSignOut = reason;
    this.#s = undefined;
    this.#me = undefined;
    this.#meError = undefined;
    clearTimeout(this.#timer);
    this.#storage?.removeItem(KEY);
    this.#changed();
  }

  #set(s: Stored): void {
    this.#s = s;
    this.#storage?.setItem(KEY, JSON.stringify(s));
    clearTimeout(this.#timer);
    // Expire on the client too, so an idle tab goes back to the login page instead of failing later.
    const ms = Math.max(0, s.expiresAt - this.#now());
    this.#timer = setTimeout(() => this.signOut("expired"), Math.min(ms, 2 ** 31 - 1));
    this.#changed();
  }

  #changed(): void {
    this.dispatchEvent(new Event("change"));
  }
}
