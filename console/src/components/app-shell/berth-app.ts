// The shell: skip link, header with navigation, the live indicator and the account, and the outlet where
// the current route's view renders. Views are lazy where they are heavy (admin pages).
import { html, LitElement, nothing, type TemplateResult } from "lit";
import { api, auth, feed, loadMe, router } from "../../app/context.ts";
import type { RouteName } from "../../router/routes.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { styles } from "./styles.ts";
import "../account-menu/index.ts";
import "../live-indicator/index.ts";
import "../notification-bell/index.ts";
import "../wallet-balance/index.ts";
import "../../views/login-view/index.ts";
import "../../views/password-view/index.ts";
import "../../views/not-found-view/index.ts";
import "../../views/dashboard-view/index.ts";
import "../../views/sessions-view/index.ts";
import "../../views/session-new-view/index.ts";
import "../../views/session-detail-view/index.ts";
import "../../views/queue-view/index.ts";

/** Admin and credits pages load on first visit: members never download the admin pages, and nobody
 * downloads the credits pages before opening one (the header's balance is in the entry). */
const lazyViews: Partial<Record<RouteName, () => Promise<unknown>>> = {
  credits: () => import("../../views/credits-view/index.ts"),
  "credits-wallet": () => import("../../views/wallet-view/index.ts"),
  "credits-requests": () => import("../../views/credit-requests-view/index.ts"),
  "credits-allocations": () => import("../../views/allocations-view/index.ts"),
  "admin-users": () => import("../../views/admin-users-view/index.ts"),
  "admin-organizations": () => import("../../views/admin-organizations-view/index.ts"),
  "admin-projects": () => import("../../views/admin-projects-view/index.ts"),
  "admin-clusters": () => import("../../views/admin-clusters-view/index.ts"),
  "admin-cluster-detail": () => import("../../views/admin-cluster-detail-view/index.ts"),
  webhooks: () => import("../../views/webhooks-view/index.ts"),
  "admin-audit": () => import("../../views/audit-view/index.ts"),
};

export class BerthApp extends LitElement {
  static override styles = [tokens, shared, styles];
  static override properties = { tick: { state: true } };
  declare tick: number;
  #loaded = new Set<RouteName>();

  constructor() {
    super();
    this.tick = 0;
  }

  #rerender = () => {
    this.tick++;
  };

  #onAuth = () => {
    if (auth.signedIn && !auth.mustChangePassword) feed.start();
    else feed.stop();
    router.resolve();
    this.tick++;
  };

  override connectedCallback(): void {
    super.connectedCallback();
    router.addEventListener("change", this.#onRoute);
    auth.addEventListener("change", this.#onAuth);
    router.start();
    if (auth.signedIn && !auth.mustChangePassword) {
      feed.start();
      void loadMe().then(() => router.resolve());
    }
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    router.removeEventListener("change", this.#onRoute);
    auth.removeEventListener("change", this.#onAuth);
  }

  #onRoute = () => {
    const name = router.current.route.name;
    const load = lazyViews[name];
    if (load && !this.#loaded.has(name)) {
      this.#loaded.add(name);
      void load().then(this.#rerender);
    }
    this.tick++;
    // Move focus to the new page's heading region for screen-reader and keyboard users.
    void this.updateComplete.then(() => {
      const main = this.renderRoot.querySelector("main");
      if (main && document.activeElement && document.activeElement !== document.body)
        main.focus({ preventScroll: true });
    });
  };

  #signOut(): void {
    auth.signOut("user");
  }

  #view(): TemplateResult {
    const m = router.current;
    switch (m.route.name) {
      case "login":
        return html`<berth-login-view .next=${m.query.get("next") ?? ""}></berth-login-view>`;
      case "password":
        return html`<berth-password-view .next=${m.query.get("next") ?? ""}></berth-password-view>`;
      case "dashboard":
        return html`<berth-dashboard-view></berth-dashboard-view>`;
      case "sessions":
        return html`<berth-sessions-view .query=${m.query}></berth-sessions-view>`;
      case "session-new":
        return html`<berth-session-new-view></berth-session-new-view>`;
      case "session-detail":
        return html`<berth-session-detail-view .sessionId=${m.params.sessionId ?? ""}></berth-session-detail-view>`;
      case "queue":
        return html`<berth-queue-view></berth-queue-view>`;
      case "credits":
        return html`<berth-credits-view .query=${m.query}></berth-credits-view>`;
      case "credits-wallet":
        return html`<berth-wallet-view .walletId=${m.params.walletId ?? ""} .query=${m.query}></berth-wallet-view>`;
      case "credits-requests":
        return html`<berth-credit-requests-view .query=${m.query}></berth-credit-requests-view>`;
      case "credits-allocations":
        return html`<berth-allocations-view .query=${m.query}></berth-allocations-view>`;
      case "admin-users":
        return html`<berth-admin-users-view .query=${m.query}></berth-admin-users-view>`;
      case "admin-organizations":
        return html`<berth-admin-organizations-view></berth-admin-organizations-view>`;
      case "admin-projects":
        return html`<berth-admin-projects-view></berth-admin-projects-view>`;
      case "admin-clusters":
        return html`<berth-admin-clusters-view></berth-admin-clusters-view>`;
      case "admin-cluster-detail":
        return html`<berth-admin-cluster-detail-view .clusterId=${m.params.clusterId ?? ""}></berth-admin-cluster-detail-view>`;
      case "webhooks":
        return html`<berth-webhooks-view></berth-webhooks-view>`;
      case "admin-audit":
        return html`<berth-audit-view></berth-audit-view>`;
      default:
        return html`<berth-not-found-view></berth-not-found-view>`;
    }
  }

  #nav(): TemplateResult | typeof nothing {
    if (!auth.signedIn || auth.mustChangePassword) return nothing;
    const here = router.current.route.name;
    const link = (href: string, label: string, active: boolean) =>
      html`<a href=${href} aria-current=${active ? "page" : "false"} class=${active ? "active" : ""}>${label}</a>`;
    return html`<nav aria-label="Main">
      ${link("/sessions", "Sessions", here.startsWith("session"))}
      ${link("/queue", "Queue", here === "queue")}
      ${link("/credits", "Credits", here.startsWith("credits"))}
      ${
        auth.isAdmin
          ? html`${link("/admin/users", "Users", here === "admin-users")} ${link("/admin/organizations", "Organizations", here === "admin-organizations")}
          ${link("/admin/projects", "Projects", here === "admin-projects")} ${link("/admin/clusters", "Clusters", here.startsWith("admin-cluster"))}
          ${link("/webhooks", "Webhooks", here === "webhooks")}
          ${link("/admin/audit", "Audit", here === "admin-audit")}`
          : nothing
      }
    </nav>`;
  }

  override render() {
    void api;
    const signedIn = auth.signedIn && !auth.mustChangePassword;
    return html`<a class="skip" href="#main" @click=${(e: Event) => {
      e.preventDefault();
      this.renderRoot.querySelector<HTMLElement>("main")?.focus();
    }}>Skip to content</a>
      <header>
        <a class="brand" href=${signedIn ? "/dashboard" : "/login"} aria-label="Berth home: your dashboard" aria-current=${router.current.route.name === "dashboard" ? "page" : "false"}>
          <svg viewBox="0 0 16 16" width="22" height="22" aria-hidden="true"><rect width="16" height="16" rx="3" fill="currentColor"></rect><path d="M4 11h8M5 8h6M6 5h4" stroke="var(--berth-bg)" stroke-width="1.5"></path></svg>
          <span>Berth</span>
        </a>
        ${this.#nav()}
        <span class="spacer"></span>
        ${signedIn ? html`<berth-wallet-balance .userId=${auth.userId} .me=${auth.me}></berth-wallet-balance>` : nothing}
        ${signedIn ? html`<berth-live-indicator .feed=${feed}></berth-live-indicator>` : nothing}
        ${signedIn ? html`<berth-notification-bell .feed=${feed}></berth-notification-bell>` : nothing}
        ${
          auth.signedIn
            ? html`<berth-account-menu .email=${auth.email ?? ""} @berth-sign-out=${this.#signOut}></berth-account-menu>`
            : nothing
        }
      </header>
      <main id="main" tabindex="-1">${this.#view()}</main>`;
  }
}
