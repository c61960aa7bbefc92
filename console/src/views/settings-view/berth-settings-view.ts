// System settings for super_admins (docs/dev/governance.md): the branding (name, logo, accent colour,
// support link; applied to the console and its sign-in page as soon as it is saved), the sign-up policy
// (closed, open, approval; allowed domains; the organization new accounts join) and the placement policy
// the worker's next placement pass uses, the hardware-fault rule (docs/dev/node-pools.md) and whether only
// signed images run (docs/dev/images.md). Each section saves its own group; the API checks it whole.
import { Task } from "@lit/task";
import { html, LitElement, nothing } from "lit";
import type { Operations } from "../../api/openapi.gen.ts";
import { branding } from "../../app/context.ts";
import "../../components/error-panel/index.ts";
import { loadImageSigningKey } from "../../app/images.ts";
import { loadOrganizations } from "../../app/organizations.ts";
import { loadSystemSettings, updateSystemSettings } from "../../app/settings.ts";
import { settingsNav } from "../../components/settings-nav.ts";
import { renderTask } from "../../components/task-states.ts";
import { credits } from "../../styles/credits.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { SETTINGS_TEST_IDS } from "../../test-ids/settings.ts";

type Settings = Operations["getSystemSettings"]["response"];
type Patch = Operations["updateSystemSettings"]["body"];
type Section = "branding" | "signup" | "placement" | "hardware_faults" | "image_signatures";

/** Numbers typed one per line or separated by commas or spaces; what is not a number is sent as typed. */
export function numbersOf(text: string): (number | string)[] {
  return text
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((t) => (/^\d+$/.test(t) ? Number(t) : t));
}

/** The logo file as a data: URL (the API takes at most 64 KiB of image). */
function dataUrlOf(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result));
    r.onerror = () => reject(r.error ?? new Error("the file could not be read"));
    r.readAsDataURL(file);
  });
}

/** Domains typed one per line or separated by commas or spaces. */
export function domainsOf(text: string): string[] {
  return [
    ...new Set(
      text
        .split(/[\s,]+/)
        .map((d) => d.trim().toLowerCase())
        .filter(Boolean),
    ),
  ];
}

export class BerthSettingsView extends LitElement {
  static override styles = [tokens, shared, page, credits];
  static override properties = { saving: { state: true }, error: { state: true }, saved: { state: true } };
  declare saving: Section | undefined;
  declare error: { section: Section; error: unknown } | undefined;
  declare saved: Section | undefined;

  #settings = new Task(this, {
    task: async (_a, { signal }) => loadSystemSettings(signal),
    args: () => [],
  });
  #orgs = new Task(this, {
    task: async (_a, { signal }) => loadOrganizations(signal),
    args: () => [],
  });
  /** Berth's own public key; undefined when the installation has none. */
  #berthKey = new Task(this, {
    task: async (_a, { signal }) => loadImageSigningKey(signal),
    args: () => [],
  });

  constructor() {
    super();
    this.saving = undefined;
    this.error = undefined;
    this.saved = undefined;
  }

  async #save(section: Section, body: () => Promise<Patch>): Promise<void> {
    this.saving = section;
    this.error = undefined;
    this.saved = undefined;
    try {
      const s = await updateSystemSettings(await body());
      void this.#settings.run();
      // The console and its sign-in page take the new branding at once.
      branding.set({ ...s.branding, signup: s.signup.policy });
      this.saved = section;
    } catch (error) {
      this.error = { section, error };
    } finally {
      this.saving = undefined;
    }
  }

  #status(section: Section) {
    return html`${this.error?.section === section ? html`<berth-error-panel heading="Not saved" .error=${this.error.error}></berth-error-panel>` : nothing}
      ${this.saved === section ? html`<p class="success" role="status" data-testid=${SETTINGS_TEST_IDS.saved(section)}>Saved.</p>` : nothing}`;
  }

  #branding(s: Settings) {
    const b = s.branding;
    const submit = (e: SubmitEvent) => {
      e.preventDefault();
      const f = new FormData(e.target as HTMLFormElement);
      void this.#save("branding", async () => {
        const file = f.get("logo");
        const logo =
          f.get("remove_logo") === "on"
            ? { logo: null }
            : file instanceof File && file.size > 0
              ? { logo: await dataUrlOf(file) }
              : {};
        const support = String(f.get("support_url") ?? "").trim();
        return {
          branding: {
            product_name: String(f.get("product_name") ?? "").trim(),
            accent_color: String(f.get("accent_color") ?? b.accent_color),
            support_url: support || null,
            ...logo,
          },
        };
      });
    };
    return html`<section class="card" aria-labelledby="h-branding">
      <h2 id="h-branding">Branding</h2>
      <p class="muted">The product's name, logo and accent colour in the console and on the sign-in page.</p>
      <form @submit=${submit} data-testid=${SETTINGS_TEST_IDS.brandingForm}>
        <div class="form-grid">
          <div class="field"><label for="b-name">Product name</label><input id="b-name" name="product_name" required maxlength="64" .value=${b.product_name} /></div>
          <div class="field"><label for="b-accent">Accent colour</label><input id="b-accent" name="accent_color" type="color" .value=${b.accent_color.toLowerCase()} aria-describedby="b-accent-hint" />
            <p class="hint" id="b-accent-hint">Links use it on white: pick a colour dark enough to read.</p></div>
          <div class="field wide"><label for="b-support">Support link</label><input id="b-support" name="support_url" type="url" placeholder="https://help.example.org" .value=${b.support_url ?? ""} /></div>
          <div class="field"><label for="b-logo">Logo (PNG, JPEG, WebP or SVG, at most 64 KiB)</label><input id="b-logo" name="logo" type="file" accept="image/png,image/jpeg,image/webp,image/svg+xml" /></div>
          <div class="field">${
            b.logo
              ? html`<p class="muted">Current logo:</p><img src=${b.logo} alt="Current logo" height="40" data-testid=${SETTINGS_TEST_IDS.currentLogo} />
                <div class="check"><input id="b-remove" name="remove_logo" type="checkbox" /><label for="b-remove">Remove the logo</label></div>`
              : html`<p class="muted">No logo yet.</p>`
          }</div>
        </div>
        ${this.#status("branding")}
        <button class="primary" type="submit" ?disabled=${this.saving === "branding"} data-testid=${SETTINGS_TEST_IDS.brandingSave}>${this.saving === "branding" ? "Saving…" : "Save branding"}</button>
      </form>
    </section>`;
  }

  #signup(s: Settings) {
    const p = s.signup;
    const orgs = this.#orgs.value?.data ?? [];
    const submit = (e: SubmitEvent) => {
      e.preventDefault();
      const f = new FormData(e.target as HTMLFormElement);
      const org = String(f.get("organization_id") ?? "");
      void this.#save("signup", async () => ({
        signup: {
          policy: String(f.get("policy")) as "closed" | "open" | "approval",
          allowed_domains: domainsOf(String(f.get("allowed_domains") ?? "")),
          organization_id: org || null,
        },
      }));
    };
    const choice = (v: "closed" | "open" | "approval", label: string) =>
      html`<label><input type="radio" name="policy" value=${v} ?checked=${p.policy === v} /> ${label}</label>`;
    return html`<section class="card" aria-labelledby="h-signup">
      <h2 id="h-signup">Sign-up</h2>
      <form @submit=${submit} data-testid=${SETTINGS_TEST_IDS.signupPolicyForm}>
        <fieldset><legend>Who may create an account</legend><div class="radio">
          ${choice("closed", "Nobody (administrators add accounts)")} ${choice("open", "Anyone")} ${choice("approval", "Anyone, after an administrator approves")}
        </div></fieldset>
        <div class="form-grid">
          <div class="field"><label for="s-domains">Allowed email domains</label><textarea id="s-domains" name="allowed_domains" aria-describedby="s-domains-hint" .value=${p.allowed_domains.join("\n")}></textarea>
            <p class="hint" id="s-domains-hint">One per line. Empty: any domain.</p></div>
          <div class="field"><label for="s-org">New accounts join</label><select id="s-org" name="organization_id">
            <option value="" ?selected=${p.organization_id === null}>No organization</option>
            ${orgs.map((o) => html`<option value=${o.id} ?selected=${p.organization_id === o.id}>${o.name}</option>`)}
            ${p.organization_id && !orgs.some((o) => o.id === p.organization_id) ? html`<option value=${p.organization_id} selected>${p.organization_id}</option>` : nothing}
          </select><p class="hint">As members; an administrator can raise their role.</p></div>
        </div>
        ${this.#status("signup")}
        <button class="primary" type="submit" ?disabled=${this.saving === "signup"} data-testid=${SETTINGS_TEST_IDS.signupPolicySave}>${this.saving === "signup" ? "Saving…" : "Save sign-up policy"}</button>
      </form>
    </section>`;
  }

  #placement(s: Settings) {
    const submit = (e: SubmitEvent) => {
      e.preventDefault();
      const f = new FormData(e.target as HTMLFormElement);
      void this.#save("placement", async () => ({
        placement: { policy: String(f.get("placement")) as "binpack" | "spread" },
      }));
    };
    const choice = (v: "binpack" | "spread", label: string) =>
      html`<label><input type="radio" name="placement" value=${v} ?checked=${s.placement.policy === v} /> ${label}</label>`;
    return html`<section class="card" aria-labelledby="h-placement">
      <h2 id="h-placement">Placement</h2>
      <form @submit=${submit} data-testid=${SETTINGS_TEST_IDS.placementForm}>
        <fieldset><legend>Where new sessions go</legend><div class="radio">
          ${choice("binpack", "Bin-pack: the fullest cluster that fits (keeps whole GPUs free)")}
          ${choice("spread", "Spread: the emptiest cluster")}
        </div></fieldset>
        <p class="hint">Applies from the worker's next placement pass.</p>
        ${this.#status("placement")}
        <button class="primary" type="submit" ?disabled=${this.saving === "placement"} data-testid=${SETTINGS_TEST_IDS.placementSave}>${this.saving === "placement" ? "Saving…" : "Save placement policy"}</button>
      </form>
    </section>`;
  }

  #faults(s: Settings) {
    const h = s.hardware_faults;
    const submit = (e: SubmitEvent) => {
      e.preventDefault();
      const f = new FormData(e.target as HTMLFormElement);
      void this.#save("hardware_faults", async () => ({
        hardware_faults: {
          xids: numbersOf(String(f.get("xids") ?? "")) as number[],
          ecc_double_bit: f.get("ecc_double_bit") === "on",
          threshold: Number(f.get("threshold")),
          window_minutes: Number(f.get("window_minutes")),
          action: String(f.get("action")) as "cordon" | "drain",
        },
      }));
    };
    const choice = (v: "cordon" | "drain", label: string) =>
      html`<label><input type="radio" name="action" value=${v} ?checked=${h.action === v} /> ${label}</label>`;
    return html`<section class="card" aria-labelledby="h-faults">
      <h2 id="h-faults">Hardware faults</h2>
      <p class="muted">When a node's GPUs report faults, Berth cordons it and tells the administrators.</p>
      <form @submit=${submit} data-testid=${SETTINGS_TEST_IDS.faultsForm}>
        <div class="form-grid">
          <div class="field"><label for="f-xids">XID codes that count</label><input id="f-xids" name="xids" .value=${h.xids.join(", ")} aria-describedby="f-xids-hint" />
            <p class="hint" id="f-xids-hint">Separated by commas. Empty: no XID counts.</p></div>
          <div class="field"><div class="check"><input id="f-ecc" name="ecc_double_bit" type="checkbox" ?checked=${h.ecc_double_bit} /><label for="f-ecc">Double-bit ECC errors count too</label></div></div>
          <div class="field"><label for="f-threshold">Faults that cordon a node</label><input id="f-threshold" name="threshold" type="number" min="1" max="1000" required .value=${String(h.threshold)} /></div>
          <div class="field"><label for="f-window">Within (minutes)</label><input id="f-window" name="window_minutes" type="number" min="1" max="10080" required .value=${String(h.window_minutes)} /></div>
        </div>
        <fieldset><legend>Then</legend><div class="radio">
          ${choice("cordon", "Cordon: no new sessions there; running ones are warned")}
          ${choice("drain", "Drain: also pause and place its sessions elsewhere")}
        </div></fieldset>
        ${this.#status("hardware_faults")}
        <button class="primary" type="submit" ?disabled=${this.saving === "hardware_faults"} data-testid=${SETTINGS_TEST_IDS.faultsSave}>${this.saving === "hardware_faults" ? "Saving…" : "Save the fault rule"}</button>
      </form>
    </section>`;
  }

  #signatures(s: Settings) {
    const sig = s.image_signatures;
    const submit = (e: SubmitEvent) => {
      e.preventDefault();
      const form = e.target as HTMLFormElement;
      const f = new FormData(form);
      const removed = new Set(f.getAll("remove_key").map(String));
      const name = String(f.get("key_name") ?? "").trim();
      const pem = String(f.get("key_pem") ?? "").trim();
      void this.#save("image_signatures", async () => ({
        image_signatures: {
          required: f.get("required") === "on",
          keys: [
            ...sig.keys.filter((k) => !removed.has(k.name)),
            ...(name || pem ? [{ name, public_key: `${pem}\n` }] : []),
          ],
        },
      })).then(() => {
        if (this.saved === "image_signatures") form.reset();
      });
    };
    const own = this.#berthKey.value;
    return html`<section class="card" aria-labelledby="h-signatures">
      <h2 id="h-signatures">Image signatures</h2>
      <p class="muted">With signatures required, a session starts, and an image is imported or added to the catalogue,
        only if its digest is signed by one of these keys or by Berth's own. Images are then named by digest.</p>
      <form @submit=${submit} data-testid=${SETTINGS_TEST_IDS.signaturesForm}>
        <div class="check"><input id="i-required" name="required" type="checkbox" ?checked=${sig.required} /><label for="i-required">Only signed images run</label></div>
        <table data-testid=${SETTINGS_TEST_IDS.signingKeys}>
          <caption class="muted">Trusted keys</caption>
          <thead><tr><th scope="col">Name</th><th scope="col">Public key</th><th scope="col">Remove</th></tr></thead>
          <tbody>
            <tr data-testid=${SETTINGS_TEST_IDS.signingKey("berth")}><td>berth <span class="muted">(Berth's own)</span></td>
              <td>${own ? html`<details><summary>${own.algorithm}</summary><pre>${own.public_key}</pre></details>` : html`<span class="muted">${this.#berthKey.error ? "None: builds and imports are not signed (BERTH_IMAGE_SIGNING_KEY_FILE)" : "…"}</span>`}</td><td></td></tr>
            ${sig.keys.map(
              (k) => html`<tr data-testid=${SETTINGS_TEST_IDS.signingKey(k.name)}><td>${k.name}</td>
                <td><details><summary>PEM</summary><pre>${k.public_key}</pre></details></td>
                <td><input type="checkbox" name="remove_key" value=${k.name} aria-label=${`Remove ${k.name}`} /></td></tr>`,
            )}
          </tbody>
        </table>
        <div class="form-grid">
          <div class="field"><label for="i-name">Add a key: its name</label><input id="i-name" name="key_name" maxlength="64" /></div>
          <div class="field wide"><label for="i-pem">Public key (PEM, ECDSA P-256 or Ed25519)</label><textarea id="i-pem" name="key_pem" placeholder="-----BEGIN PUBLIC KEY-----" aria-describedby="i-pem-hint"></textarea>
            <p class="hint" id="i-pem-hint">As <code>cosign generate-key-pair</code> writes it to cosign.pub.</p></div>
        </div>
        ${this.#status("image_signatures")}
        <button class="primary" type="submit" ?disabled=${this.saving === "image_signatures"} data-testid=${SETTINGS_TEST_IDS.signaturesSave}>${this.saving === "image_signatures" ? "Saving…" : "Save image signatures"}</button>
      </form>
    </section>`;
  }

  override render() {
    return html`<div class="page-head"><h1>System settings</h1></div>
      ${settingsNav("settings")}
      ${renderTask(this.#settings, {
        pendingLabel: "Loading the settings…",
        errorHeading: "The settings could not be loaded (only super_admins may read them)",
        complete: (s) =>
          html`${this.#branding(s)}${this.#signup(s)}${this.#placement(s)}${this.#faults(s)}${this.#signatures(s)}`,
      })}`;
  }
}
