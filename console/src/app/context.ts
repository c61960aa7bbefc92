// The console's few singletons, wired once: the API client (which reports auth failures to the store),
// the auth store, the router (whose guard reads the store) and the live session feed.
import { ApiClient, type ApiError } from "../api/client.ts";
import { LiveFeed } from "../api/live-feed.ts";
import { AuthStore } from "../auth/auth-store.ts";
import { Router } from "../router/router.ts";
import { BrandingStore } from "./branding.ts";

export const auth = new AuthStore();

export const api = new ApiClient({
  token: () => auth.token,
  onAuthFailure: (err: ApiError) => {
    if (err.code === "password_change_required") {
      router.resolve();
      return;
    }
    auth.signOut(err.code === "token_expired" ? "expired" : "revoked");
  },
});

// Until the account is loaded (a reload of a deep link) the guard lets admin pages through and the shell
// shows that the account loads; loadMe() re-checks the route once roles are known, and the API refuses
// what the role may not do in any case.
export const router = new Router(() => ({
  signedIn: auth.signedIn,
  mustChangePassword: auth.mustChangePassword,
  isAdmin: auth.me ? auth.isAdmin : true,
}));

export const feed = new LiveFeed({ api });

/** Loads the account after sign-in (roles decide the admin pages) and re-checks the route. */
export async function loadMe(): Promise<void> {
  if (!auth.signedIn || auth.mustChangePassword) return;
  try {
    auth.setMe(await api.call("getMe"));
  } catch (err) {
    // An expired token signs out through onAuthFailure; anything else is shown by the shell, with a retry.
    if (auth.signedIn) auth.meFailed(err);
  }
}

/** The product's name, logo and accent (public; the sign-in page shows them before anyone signs in). */
export const branding = new BrandingStore(() => api.call("getBranding"));
