// The header's links as data: the pages every signed-in person uses, then the administration pages that
// sit behind the Admin menu. A page is "here" when the current route's name starts with one of its prefixes.
import type { RouteName } from "../../router/routes.ts";

export interface NavLink {
  href: string;
  label: string;
  routes: readonly string[];
  /** Shown to super_admins only (platform-wide settings); the API refuses others anyway. */
  superAdmin?: true;
}

export const MEMBER_LINKS: readonly NavLink[] = [
  { href: "/dashboard", label: "Dashboard", routes: ["dashboard"] },
  { href: "/sessions", label: "Sessions", routes: ["session"] },
  { href: "/queue", label: "Queue", routes: ["queue"] },
  { href: "/images", label: "Images", routes: ["images"] },
  { href: "/credits", label: "Credits", routes: ["credits"] },
  { href: "/storage/volumes", label: "Volumes", routes: ["volumes"] },
  { href: "/quotas", label: "Limits", routes: ["quota"] },
];

export const ADMIN_LINKS: readonly NavLink[] = [
  { href: "/admin/users", label: "Users", routes: ["admin-users"] },
  { href: "/admin/organizations", label: "Organizations", routes: ["admin-organizations"] },
  { href: "/admin/projects", label: "Projects", routes: ["admin-projects"] },
  { href: "/admin/clusters", label: "Clusters", routes: ["admin-cluster"] },
  { href: "/webhooks", label: "Webhooks", routes: ["webhooks"] },
  { href: "/admin/audit", label: "Audit log", routes: ["admin-audit"] },
  { href: "/admin/catalog", label: "Catalog", routes: ["admin-catalog"] },
  { href: "/admin/idle-limits", label: "Idle & time limits", routes: ["admin-idle-limits"] },
  { href: "/admin/fair-share", label: "Fair share", routes: ["admin-fair-share"] },
  { href: "/admin/storage/pools", label: "Storage pools", routes: ["admin-pools"], superAdmin: true },
  { href: "/admin/settings", label: "System settings", routes: ["admin-settings"], superAdmin: true },
  { href: "/admin/signups", label: "Sign-up requests", routes: ["admin-signups"], superAdmin: true },
];

export const isHere = (link: NavLink, here: RouteName): boolean => link.routes.some((r) => here.startsWith(r));
