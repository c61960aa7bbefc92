// The product's branding (GET /api/v1/system/branding, public): name, logo, accent colour, support link,
// and whether sign-up is offered. Loaded once at start and again after a super_admin saves it, so the
// header, the sign-in page and the tab's title change at once. The accent reaches every component through
// --berth-brand-accent on the document (tokens in styles/shared.ts read it in the light scheme).
import type { Operations } from "../api/openapi.gen.ts";

export type Branding = Operations["getBranding"]["response"];

export const DEFAULT_BRANDING: Branding = {
  product_name: "Berth",
  logo: null,
  accent_color: "#2563eb",
  support_url: null,
  signup: "closed",
};

/** Black or white, whichever reads better on `hex` (WCAG relative luminance). */
export function textOn(hex: string): "#000000" | "#ffffff" {
  const c = [1, 3, 5].map((i) => {
    const v = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  const l = 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  // Contrast with white (1.05 / (l + 0.05)) against contrast with black ((l + 0.05) / 0.05).
  return 1.05 / (l + 0.05) >= (l + 0.05) / 0.05 ? "#ffffff" : "#000000";
}

export class BrandingStore extends EventTarget {
  #b: Branding = DEFAULT_BRANDING;
  readonly #load: () => Promise<Branding>;

  constructor(load: () => Promise<Branding>) {
    super();
    this.#load = load;
  }

  get current(): Branding {
    return this.#b;
  }

  /** Fetches the branding and applies it; a failure keeps what was there (the defaults at first). */
  async refresh(): Promise<void> {
    try {
      this.set(await this.#load());
    } catch {
      // The sign-in page still works without it.
    }
  }

  set(b: Branding): void {
    this.#b = b;
    if (typeof document !== "undefined") {
      const root = document.documentElement.style;
      root.setProperty("--berth-brand-accent", b.accent_color);
      root.setProperty("--berth-brand-accent-fg", textOn(b.accent_color));
      document.title = b.product_name;
    }
    this.dispatchEvent(new Event("change"));
  }
}
