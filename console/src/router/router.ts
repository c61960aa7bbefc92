// History-API router: keeps the URL the source of truth (deep links, back/forward, reload keep the place),
// applies the guard of routes.ts on every change and tells the shell through a "change" event.
import { type AuthView, guard, type Match, matchRoute } from "./routes.ts";

export class Router extends EventTarget {
  #current: Match = matchRoute("/");
  readonly #auth: () => AuthView;

  constructor(auth: () => AuthView) {
    super();
    this.#auth = auth;
  }

  get current(): Match {
    return this.#current;
  }

  start(): void {
    window.addEventListener("popstate", () => this.resolve());
    // Same-origin links inside the app (also inside shadow roots: composedPath) navigate without a reload.
    document.addEventListener("click", (e) => {
      if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      const a = e.composedPath().find((n): n is HTMLAnchorElement => n instanceof HTMLAnchorElement);
      if (!a?.href || a.target || a.hasAttribute("download") || a.dataset.external !== undefined) return;
      const url = new URL(a.href);
      if (url.origin !== location.origin || url.pathname.startsWith("/api/")) return;
      e.preventDefault();
      this.navigate(url.pathname + url.search);
    });
    this.resolve();
  }

  navigate(href: string, opts: { replace?: boolean } = {}): void {
    if (href === location.pathname + location.search && !opts.replace) {
      this.resolve();
      return;
    }
    if (opts.replace) history.replaceState(null, "", href);
    else history.pushState(null, "", href);
    this.resolve();
    window.scrollTo?.(0, 0);
  }

  /** Re-evaluates the current URL (after sign-in or sign-out the guard answers differently). */
  resolve(): void {
    for (let hops = 0; hops < 5; hops++) {
      const m = matchRoute(location.pathname, location.search);
      const g = guard(m, this.#auth());
      if (g.kind === "redirect") {
        history.replaceState(null, "", g.to);
        continue;
      }
      this.#current = m;
      document.title = `${m.route.title} · Berth`;
      this.dispatchEvent(new Event("change"));
      return;
    }
  }
}
