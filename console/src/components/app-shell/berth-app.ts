// The shell: skip link, header with navigation, the live indicator and the account, and the outlet where
// the current route's view renders. Views are lazy where they are heavy (admin pages).
import { html, LitElement, nothing, type TemplateResult } from "lit";
import { auth, branding, feed, loadMe, router } from "../../app/context.ts";
import type { RouteName } from "../../router/routes.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { ADMIN_LINKS, isHere, MEMBER_LINKS } from "./nav-links.ts";
import { styles } from "./styles.ts";
import "../account-menu/index.ts";
import "../error-panel/index.ts";
import "../pending/index.ts";
import "../admin-menu/index.ts";
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
import "../../views/images-view/index.ts";
import { SHELL_TEST_IDS } from "../../test-ids/shell.ts";

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
  quotas: () => import("../../views/quotas-view/index.ts"),
  "quota-requests": () => import("../../views/quota-inbox-view/index.ts"),
  "admin-catalog": () => import("../../views/admin-catalog-view/index.ts"),
  signup: () => import("../../views/signup-view/index.ts"),
  "credits-budgets": () => import("../../views/budgets-view/index.ts"),
  "admin-settings": () => import("../../views/settings-view/index.ts"),
  "admin-signups": () => import("../../views/signup-requests-view/index.ts"),
  "admin-idle-limits": () => import("../../views/admin-idle-limits-view/index.ts"),
  "admin-fair-share": () => import("../../views/fair-share-view/index.ts"),
  volumes: () => import("../../views/volumes-view/index.ts"),
  "admin-pools": () => import("../../views/admin-pools-view/index.ts"),
  "notification-settings": () => import("../../views/notification-settings-view/index.ts"),
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
    branding.addEventListener("change", this.#rerender);
    void branding.refresh();
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
    branding.removeEventListener("change", this.#rerender);
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

  #retryMe = () => {
    auth.meLoading();
    void loadMe().then(() => router.resolve());
  };

  /** A signed-in page reads the account (memberships, roles): until it is here, the page waits for it. */
  #accountWait(): TemplateResult {
    return auth.meError
      ? html`<berth-error-panel heading="Your account did not load" .error=${auth.meError} retryable
          data-testid=${SHELL_TEST_IDS.accountError} @berth-retry=${this.#retryMe}></berth-error-panel>`
      : html`<berth-pending label="Loading your account…" data-testid=${SHELL_TEST_IDS.accountPending}></berth-pending>`;
  }

  #view(): TemplateResult {
    const m = router.current;
    if (m.route.access !== "public" && auth.signedIn && !auth.mustChangePassword && !auth.me)
      return this.#accountWait();
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
      case "images":
        return html`<berth-images-view></berth-images-view>`;
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
      case "quotas":
        return html`<berth-quotas-view></berth-quotas-view>`;
      case "quota-requests":
        return html`<berth-quota-inbox-view></berth-quota-inbox-view>`;
      case "admin-catalog":
        return html`<berth-admin-catalog-view .query=${m.query}></berth-admin-catalog-view>`;
      case "credits-budgets":
        return html`<berth-budgets-view></berth-budgets-view>`;
      case "signup":
        return html`<berth-signup-view></berth-signup-view>`;
      case "admin-settings":
        return html`<berth-settings-view></berth-settings-view>`;
      case "admin-signups":
        return html`<berth-signup-requests-view .query=${m.query}></berth-signup-requests-view>`;
      case "admin-idle-limits":
        return html`<berth-admin-idle-limits-view></berth-admin-idle-limits-view>`;
      case "admin-fair-share":
        return html`<berth-fair-share-view></berth-fair-share-view>`;
      case "volumes":
        return html`<berth-volumes-view></berth-volumes-view>`;
      case "admin-pools":
        return html`<berth-admin-pools-view></berth-admin-pools-view>`;
      case "notification-settings":
        return html`<berth-notification-settings-view></berth-notification-settings-view>`;
      default:
        return html`<berth-not-found-view></berth-not-found-view>`;
    }
  }

  #nav(): TemplateResult | typeof nothing {
    if (!auth.signedIn || auth.mustChangePassword) return nothing;
    const here = router.current.route.name;
    return html`<nav aria-label="Main">
      ${MEMBER_LINKS.map((l) => {
        const active = isHere(l, here);
        return html`<a href=${l.href} aria-current=${active ? "page" : "false"} class=${active ? "active" : ""}>${l.label}</a>`;
      })}
      ${
        auth.isAdmin
          ? html`<berth-admin-menu .links=${ADMIN_LINKS.filter((l) => !l.superAdmin || auth.isSuperAdmin).map((l) => ({ href: l.href, label: l.label, active: isHere(l, here) }))}></berth-admin-menu>`
          : nothing
      }
    </nav>`;
  }

  override render() {
    const signedIn = auth.signedIn && !auth.mustChangePassword;
    const b = branding.current;
    return html`<a class="skip" href="#main" @click=${(e: Event) => {
      e.preventDefault();
      this.renderRoot.querySelector<HTMLElement>("main")?.focus();
    }}>Skip to content</a>
      <header>
        <a class="brand" href=${signedIn ? "/dashboard" : "/login"} aria-label="${b.product_name} home: your dashboard" data-testid=${SHELL_TEST_IDS.brand}>
          ${
            b.logo
              ? html`<img src=${b.logo} alt="" width="22" height="22" data-testid=${SHELL_TEST_IDS.brandLogo} />`
              : html`<svg viewBox="0 0 16 16" width="22" height="22" aria-hidden="true"><rect width="16" height="16" rx="3" fill="currentColor"></rect><path d="M4 11h8M5 8h6M6 5h4" stroke="var(--berth-bg)" stroke-width="1.5"></path></svg>`
          }
          <span data-testid=${SHELL_TEST_IDS.brandName}>${b.product_name}</span>
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
      <main id="main" tabindex="-1">${this.#view()}</main>
      ${b.support_url ? html`<footer><a href=${b.support_url} rel="noopener" target="_blank" data-testid=${SHELL_TEST_IDS.supportLink}>Help and support</a></footer>` : nothing}`;
  }
}
