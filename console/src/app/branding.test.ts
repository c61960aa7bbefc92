import { describe, expect, it } from "vitest";
import { BrandingStore, DEFAULT_BRANDING, textOn } from "./branding.ts";

describe("branding", () => {
  it("writes on an accent in whichever of black and white reads better", () => {
    expect(textOn("#1f56c9")).toBe("#ffffff");
    expect(textOn("#000000")).toBe("#ffffff");
    expect(textOn("#ffdd00")).toBe("#000000");
    expect(textOn("#ffffff")).toBe("#000000");
  });

  it("keeps the defaults when the branding cannot be read, and tells listeners when it changes", async () => {
    const failing = new BrandingStore(async () => {
      throw new Error("offline");
    });
    await failing.refresh();
    expect(failing.current).toEqual(DEFAULT_BRANDING);
    const acme = { ...DEFAULT_BRANDING, product_name: "Acme GPU" };
    const s = new BrandingStore(async () => acme);
    let changes = 0;
    s.addEventListener("change", () => changes++);
    await s.refresh();
    expect(s.current.product_name).toBe("Acme GPU");
    expect(changes).toBe(1);
  });
});
