// Page object of the system settings (branding, sign-up policy, placement, the fault rule, image
// signatures, the sign-up queue). Test ids come from the console (@berth/console/test-ids/*).
import { SETTINGS_TEST_IDS as T } from "@berth/console/test-ids/settings";
import type { Page } from "playwright-core";
import { Shell } from "./shell.ts";

export interface Branding {
  productName?: string;
  accent?: string;
  supportUrl?: string;
  logo?: { name: string; mimeType: string; buffer: Buffer };
}

export class SettingsPage {
  readonly page: Page;
  readonly shell: Shell;
  constructor(page: Page) {
    this.page = page;
    this.shell = new Shell(page);
  }

  async openFromMenu(): Promise<void> {
    await this.shell.openAdmin("System settings");
    await this.page.getByTestId(T.brandingForm).waitFor();
  }

  async saveBranding(b: Branding): Promise<void> {
    if (b.productName !== undefined) await this.page.getByLabel("Product name").fill(b.productName);
    if (b.accent !== undefined) await this.page.getByLabel("Accent colour").fill(b.accent);
    if (b.supportUrl !== undefined) await this.page.getByLabel("Support link").fill(b.supportUrl);
    if (b.logo) await this.page.getByLabel(/^Logo/).setInputFiles(b.logo);
    await this.page.getByTestId(T.brandingSave).click();
  }

  /** A section's saved notice. */
  saved(section: "branding" | "signup" | "placement" | "hardware_faults" | "image_signatures") {
    return this.page.getByTestId(T.saved(section));
  }
  currentLogo() {
    return this.page.getByTestId(T.currentLogo);
  }

  async openSignupWithApproval(domains: string): Promise<void> {
    await this.page.getByLabel("Anyone, after an administrator approves").check();
    await this.page.getByLabel("Allowed email domains").fill(domains);
    await this.page.getByTestId(T.signupPolicySave).click();
  }

  async placeBySpreading(): Promise<void> {
    await this.page.getByLabel("Spread: the emptiest cluster").check();
    await this.page.getByTestId(T.placementSave).click();
  }

  /** The fault rule as typed: XIDs as text (so bad ones reach the API as they would from a person). */
  async saveFaultRule(r: { xids: string; ecc: boolean; threshold: number; windowMinutes: number; drain: boolean }) {
    await this.page.getByLabel("XID codes that count").fill(r.xids);
    await this.page.getByLabel("Double-bit ECC errors count too").setChecked(r.ecc);
    await this.page.getByLabel("Faults that cordon a node").fill(String(r.threshold));
    await this.page.getByLabel("Within (minutes)").fill(String(r.windowMinutes));
    await this.page
      .getByLabel(
        r.drain
          ? "Drain: also pause and place its sessions elsewhere"
          : "Cordon: no new sessions there; running ones are warned",
      )
      .check();
    await this.page.getByTestId(T.faultsSave).click();
  }

  /** Saves the image-signature settings: whether they are required, a key to add, keys to remove. */
  async saveSignatures(o: { required: boolean; add?: { name: string; pem: string }; remove?: string[] }) {
    await this.page.getByLabel("Only signed images run").setChecked(o.required);
    for (const name of o.remove ?? []) await this.page.getByLabel(`Remove ${name}`).check();
    if (o.add) {
      await this.page.getByLabel("Add a key: its name").fill(o.add.name);
      await this.page.getByLabel(/^Public key \(PEM/).fill(o.add.pem);
    }
    await this.page.getByTestId(T.signaturesSave).click();
  }
  signingKey(name: string) {
    return this.page.getByTestId(T.signingKey(name));
  }

  async openSignupQueue(): Promise<void> {
    await this.page.getByTestId(T.tab("signups")).click();
  }
  signupRequests() {
    return this.page.getByTestId(T.signupRequest);
  }
  signupRequest(email: string) {
    return this.page.locator(`[data-testid="${T.signupRequest}"][data-email="${email}"]`);
  }
  async approve(email: string): Promise<void> {
    await this.signupRequest(email).getByTestId(T.approve).click();
    await this.page.getByTestId(T.signupNotice).waitFor();
  }
}
