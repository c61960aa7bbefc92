// @vitest-environment happy-dom
// The header's account button: the email and Sign out behind it, Escape and a click elsewhere close it.
import { afterEach, describe, expect, it } from "vitest";
import "./index.ts";
import type { BerthAccountMenu } from "./berth-account-menu.ts";

async function aMenu(email = "admin@berth.local"): Promise<BerthAccountMenu> {
  const el = document.createElement("berth-account-menu");
  el.email = email;
  document.body.append(el);
  await el.updateComplete;
  return el;
}
const part = (el: BerthAccountMenu, id: string) => el.shadowRoot?.querySelector<HTMLElement>(`[data-testid="${id}"]`);

afterEach(() => {
  document.body.replaceChildren();
});

describe("the account menu", () => {
  it("is one button named for the account, its panel closed", async () => {
    const el = await aMenu();
    const button = part(el, "account-menu");
    expect(button?.getAttribute("aria-label")).toBe("Account: admin@berth.local");
    expect(button?.getAttribute("aria-expanded")).toBe("false");
    expect(button?.textContent?.trim()).toBe("A");
    expect(part(el, "account-panel")?.hidden).toBe(true);
    expect(part(el, "account-email")?.textContent).toBe("admin@berth.local");
  });

  it("opens on click and asks to sign out", async () => {
    const el = await aMenu();
    part(el, "account-menu")?.click();
    await el.updateComplete;
    expect(part(el, "account-menu")?.getAttribute("aria-expanded")).toBe("true");
    expect(part(el, "account-panel")?.hidden).toBe(false);
    let asked = 0;
    document.addEventListener("berth-sign-out", () => asked++, { once: true });
    part(el, "sign-out")?.click();
    await el.updateComplete;
    expect(asked).toBe(1);
    expect(el.open).toBe(false);
  });

  it("closes on Escape and on a click elsewhere", async () => {
    const el = await aMenu();
    el.open = true;
    await el.updateComplete;
    part(el, "sign-out")?.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true, composed: true }));
    await el.updateComplete;
    expect(el.open).toBe(false);
    el.open = true;
    await el.updateComplete;
    document.body.click();
    await el.updateComplete;
    expect(el.open).toBe(false);
  });
});
