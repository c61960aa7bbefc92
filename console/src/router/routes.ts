// The console's routes: a pure table, matched without the DOM (routes.test.ts). Deep links such as
// /sessions/ses_abc load the app because the API answers index.html for every non-API path.

export type RouteName =
  | "login"
  | "password"
  | "dashboard"
  | "sessions"
  | "session-new"
  | "session-detail"
  | "queue"
  | "images"
  | "credits"
  | "credits-wallet"
  | "credits-requests"
  | "credits-allocations"
  | "admin-users"
  | "admin-organizations"
  | "admin-projects"
  | "admin-clusters"
  | "admin-cluster-detail"
  | "webhooks"
  | "admin-audit"
  | "quotas"
  | "quota-requests"
  | "admin-catalog"
  | "signup"
  | "credits-budgets"
  | "admin-settings"
  | "admin-signups"
  | "admin-idle-limits"
  | "admin-fair-share"
  | "volumes"
  | "admin-pools"
  | "notification-settings"
  | "not-found";

/** Who may open a route: anyone, a signed-in account, or an administrator. */
export type Access = "public" | "user" | "admin";

export interface RouteDef {
  name: RouteName;
  pattern: string;
  title: string;
  access: Access;
}

export const ROUTES: readonly RouteDef[] = [
  { name: "login", pattern: "/login", title: "Sign in", access: "public" },
  { name: "password", pattern: "/password", title: "Change password", access: "public" },
  { name: "dashboard", pattern: "/dashboard", title: "Dashboard", access: "user" },
  { name: "sessions", pattern: "/sessions", title: "Sessions", access: "user" },
  { name: "session-new", pattern: "/sessions/new", title: "New session", access: "user" },
  { name: "session-detail", pattern: "/sessions/:sessionId", title: "Session", access: "user" },
  { name: "queue", pattern: "/queue", title: "Queue", access: "user" },
  { name: "images", pattern: "/images", title: "Images", access: "user" },
  { name: "credits", pattern: "/credits", title: "Credits", access: "user" },
  { name: "credits-wallet", pattern: "/credits/wallets/:walletId", title: "Wallet", access: "user" },
  { name: "credits-requests", pattern: "/credits/requests", title: "Credit requests", access: "user" },
  // Project admins allocate too (the router's "admin" is org and platform admins): the page itself says
  // when there is nothing the person manages, and the API decides.
  { name: "credits-allocations", pattern: "/credits/allocations", title: "Allocations", access: "user" },
  { name: "credits-budgets", pattern: "/credits/budgets", title: "Budgets and refills", access: "user" },
  { name: "admin-users", pattern: "/admin/users", title: "Users", access: "admin" },
  { name: "admin-organizations", pattern: "/admin/organizations", title: "Organizations", access: "admin" },
  { name: "admin-projects", pattern: "/admin/projects", title: "Projects", access: "admin" },
  { name: "admin-clusters", pattern: "/admin/clusters", title: "Clusters", access: "admin" },
  { name: "admin-cluster-detail", pattern: "/admin/clusters/:clusterId", title: "Cluster", access: "admin" },
  { name: "webhooks", pattern: "/webhooks", title: "Webhooks", access: "admin" },
  { name: "admin-audit", pattern: "/admin/audit", title: "Audit log", access: "admin" },
  { name: "quotas", pattern: "/quotas", title: "Limits", access: "user" },
  // Project admins decide their projects' requests: the inbox is for every signed-in account; the API scopes it.
  { name: "quota-requests", pattern: "/quotas/requests", title: "Quota requests", access: "user" },
  { name: "admin-catalog", pattern: "/admin/catalog", title: "Catalog", access: "admin" },
  { name: "signup", pattern: "/signup", title: "Create an account", access: "public" },
  { name: "admin-settings", pattern: "/admin/settings", title: "System settings", access: "admin" },
  { name: "admin-signups", pattern: "/admin/signups", title: "Sign-up requests", access: "admin" },
  { name: "admin-idle-limits", pattern: "/admin/idle-limits", title: "Idle & time limits", access: "admin" },
  { name: "admin-fair-share", pattern: "/admin/fair-share", title: "Fair share", access: "admin" },
  { name: "volumes", pattern: "/storage/volumes", title: "Volumes", access: "user" },
  { name: "admin-pools", pattern: "/admin/storage/pools", title: "Storage pools", access: "admin" },
  { name: "notification-settings", pattern: "/settings/notifications", title: "Notification settings", access: "user" },
];

export const NOT_FOUND: RouteDef = { name: "not-found", pattern: "", title: "Not found", access: "public" };
export const HOME = "/dashboard";

export interface Match {
  route: RouteDef;
  params: Record<string, string>;
  query: URLSearchParams;
  /** path + search, as it goes into ?next= */
  href: string;
}

function matchPattern(pattern: string, path: string): Record<string, string> | undefined {
  const a = pattern.split("/").filter(Boolean);
  const b = path.split("/").filter(Boolean);
  if (a.length !== b.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < a.length; i++) {
    const p = a[i] as string;
    const s = b[i] as string;
    if (p.startsWith(":")) {
      try {
        params[p.slice(1)] = decodeURIComponent(s);
      } catch {
        return undefined;
      }
    } else if (p !== s) return undefined;
  }
  return params;
}

/** Static segments win over parameters (/sessions/new is not a session called "new"): table order. */
export function matchRoute(path: string, search = ""): Match {
  const clean = path.replace(/\/+$/, "") || "/";
  const query = new URLSearchParams(search);
  const href = clean + (search && search !== "?" ? (search.startsWith("?") ? search : `?${search}`) : "");
  for (const route of ROUTES) {
    const params = matchPattern(route.pattern, clean);
    if (params) return { route, params, query, href };
  }
  return { route: NOT_FOUND, params: {}, query, href };
}

/** Builds a path from a route name and its params. */
export function pathFor(
  name: RouteName,
  params: Record<string, string> = {},
  query?: Record<string, string | undefined>,
): string {
  const route = ROUTES.find((r) => r.name === name);
  if (!route) return "/";
  const path = route.pattern.replace(/:([A-Za-z]+)/g, (_m, k: string) => encodeURIComponent(params[k] ?? ""));
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== "") qs.set(k, v);
  const s = qs.toString();
  return s ? `${path}?${s}` : path;
}

/** Only same-origin app paths are honoured as ?next= (never //evil.example or https://…). */
export function safeNext(next: string | null | undefined): string {
  if (!next?.startsWith("/") || next.startsWith("//") || next.startsWith("/\\")) return HOME;
  const m = matchRoute(next.split("?")[0] ?? "/");
  if (m.route.name === "login" || m.route.name === "password" || m.route.name === "signup") return HOME;
  return next;
}

export type Guard = { kind: "allow" } | { kind: "redirect"; to: string };

export interface AuthView {
  signedIn: boolean;
  mustChangePassword: boolean;
  isAdmin: boolean;
}

/**
 * Where a signed-out user goes (login, keeping their place), and the forced password change: while
 * must_change_password is set nothing but /password is reachable.
 */
export function guard(m: Match, auth: AuthView): Guard {
  const name = m.route.name;
  if (!auth.signedIn) {
    if (name === "login" || name === "signup") return { kind: "allow" };
    if (name === "not-found" && m.href === "/") return { kind: "redirect", to: pathFor("login") };
    return { kind: "redirect", to: pathFor("login", {}, { next: name === "password" ? undefined : m.href }) };
  }
  if (auth.mustChangePassword)
    return name === "password"
      ? { kind: "allow" }
      : { kind: "redirect", to: pathFor("password", {}, { next: name === "login" ? undefined : m.href }) };
  if (name === "login" || name === "password" || name === "signup" || m.href === "/")
    return { kind: "redirect", to: safeNext(m.query.get("next")) };
  if (m.route.access === "admin" && !auth.isAdmin) return { kind: "redirect", to: HOME };
  return { kind: "allow" };
}
