// The create wizard, one page in steps: offering (GPU model, tier, hourly rate, free GPUs now per
// cluster), preset, image (the member's private images tagged), optional cluster pin, name, the volumes
// to mount (what is mountable, what is read-only, which would keep the session on one cluster), its idle
// timeout and maximum running time within the resource policy's bounds (checked as typed), and the
// cost (storage included) before confirming. When no GPU is free it says the session will queue, and where; when the session could
// not start at all (credits, spending limits, the policy), Create is disabled with the reason in plain
// words and what to do about it (data/refusal.ts).
import { Task, TaskStatus } from "@lit/task";
import { html, LitElement, nothing } from "lit";
import { ApiError, newIdempotencyKey } from "../../api/client.ts";
import type { CostPreview, Image, Offering, ResourcePreset, StorageVolume } from "../../api/openapi.gen.ts";
import { auth, router } from "../../app/context.ts";
import { onSessionsChanged } from "../../app/live.ts";
import "../../components/error-panel/index.ts";
import { loadOfferings, loadResourcePresets } from "../../app/catalog.ts";
import { loadImages } from "../../app/images.ts";
import { loadEffectiveLimits } from "../../app/quotas.ts";
import { createSession, loadGpuAvailability, previewSessionCost } from "../../app/sessions.ts";
import { loadVolumes } from "../../app/storage.ts";
import { renderTask } from "../../components/task-states.ts";
import { formatCredits } from "../../data/format.ts";
import { preferredOffering } from "../../data/quotas.ts";
import { type IdleRules, minutesText, reclaimAskProblems } from "../../data/reclaim.ts";
import type { RefusalText } from "../../data/refusal.ts";
import {
  clustersForModel,
  IdempotencyKeys,
  imageTag,
  roomForOffering,
  sortImages,
  tierLabel,
} from "../../data/wizard.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { checks } from "../volumes-view/styles.ts";
import { styles } from "./styles.ts";

interface Catalog {
  offerings: Offering[];
  presets: ResourcePreset[];
  images: Image[];
}

/** The cost preview, with its refusal in plain words when it says the session could not start now. */
type Previewed = CostPreview & { refusalText?: RefusalText };

const DURATIONS = [
  { s: 3600, label: "1 hour" },
  { s: 4 * 3600, label: "4 hours" },
  { s: 8 * 3600, label: "8 hours" },
  { s: 24 * 3600, label: "24 hours" },
];

export class BerthSessionNewView extends LitElement {
  static override styles = [tokens, shared, page, styles, checks];
  static override properties = {
    offering: { state: true },
    preset: { state: true },
    image: { state: true },
    cluster: { state: true },
    name: { state: true },
    duration: { state: true },
    busy: { state: true },
    error: { state: true },
    mounts: { state: true },
    idleMinutes: { state: true },
    runtimeHours: { state: true },
  };
  /** The asked idle timeout in minutes and maximum running time in hours, as typed; "": the policy's. */
  declare idleMinutes: string;
  declare runtimeHours: string;
  /** Volumes to mount, by id: where, and read-only or not. */
  declare mounts: Record<string, { path: string; readOnly: boolean }>;
  declare offering: string;
  declare preset: string;
  declare image: string;
  declare cluster: string;
  declare name: string;
  declare duration: number;
  declare busy: boolean;
  declare error: unknown;
  #keys = new IdempotencyKeys(newIdempotencyKey);
  #picked = false;
  #unsubscribe: (() => void) | undefined;

  #catalog = new Task(this, {
    task: async (_a, { signal }): Promise<Catalog> => {
      const [o, p, i] = await Promise.all([loadOfferings(signal), loadResourcePresets(signal), loadImages(signal)]);
      const offerings = o.data.filter((x) => x.enabled);
      const presets = p.data.toSorted((a, b) =>
        a.kind === b.kind ? a.gpu_count - b.gpu_count : a.kind === "gpu" ? -1 : 1,
      );
      const images = sortImages(i.data, auth.userId);
      this.preset ||= presets[0]?.name ?? "";
      this.image ||= images[0]?.name ?? "";
      return { offerings, presets, images };
    },
    args: () => [],
  });
  #availability = new Task(this, {
    task: async (_a, { signal }) => loadGpuAvailability(signal),
    args: () => [],
  });
  #volumes = new Task(this, {
    task: async (_a, { signal }) => loadVolumes(signal),
    args: () => [],
  });
  /** The idle rules and bounds sessions get here (one organization: the API's default; else none shown). */
  #rules = new Task(this, {
    task: async (_a, { signal }): Promise<IdleRules | undefined> => {
      try {
        return (await loadEffectiveLimits({}, signal)).idle;
      } catch (e) {
        // Several organizations: the API asks which one; the session then gets its policy's rules.
        if (e instanceof ApiError && e.code === "validation_failed") return undefined;
        throw e;
      }
    },
    args: () => [],
  });
  #preview = new Task(this, {
    task: async ([offering, preset, duration, volumes], { signal }): Promise<Previewed | undefined> => {
      if (!offering) return undefined;
      await new Promise((r) => setTimeout(r, 150)); // debounce quick changes
      signal.throwIfAborted();
      const p = await previewSessionCost(
        {
          offering: offering as string,
          ...(preset ? { preset: preset as string } : {}),
          duration_seconds: duration as number,
          ...(volumes ? { volumes: (volumes as string).split(",") } : {}),
        },
        signal,
      );
      if (p.can_start) return p;
      // The wording is loaded only when a refusal is there to explain (most previews say yes).
      const { describeRefusal } = await import("../../data/refusal.ts");
      const refusal = p.refusal ?? {
        code: "unknown",
        message: "The API says this session cannot start now.",
        details: {},
      };
      const ctx = { organizationId: p.organization_id, hourlyRate: p.hourly_rate, cost: p.cost };
      return { ...p, refusalText: describeRefusal(refusal, ctx) };
    },
    // A string, not an array: Task compares its arguments with ===, and a fresh array each render would
    // run the preview again on every update, for ever.
    args: () => [this.offering, this.preset, this.duration, Object.keys(this.mounts).sort().join(",")],
  });

  constructor() {
    super();
    this.offering = "";
    this.preset = "";
    this.image = "";
    this.cluster = "";
    this.name = "";
    this.duration = 3600;
    this.busy = false;
    this.error = undefined;
    this.mounts = {};
    this.idleMinutes = "";
    this.runtimeHours = "";
  }

  /** The asks in the API's minutes (undefined: left to the policy). */
  #asks(): { idle: number | undefined; runtime: number | undefined } {
    const idle = this.idleMinutes.trim();
    const hours = this.runtimeHours.trim();
    return {
      idle: idle === "" ? undefined : Number(idle),
      runtime: hours === "" ? undefined : Math.round(Number(hours) * 60),
    };
  }

  #askProblems(): { idle?: string; runtime?: string } {
    const rules = this.#rules.value;
    if (!rules) return {};
    const a = this.#asks();
    return reclaimAskProblems(rules, a.idle, a.runtime);
  }

  /**
   * The offering the wizard opens on: one with GPUs free now (data/quotas.ts' preferredOffering), picked
   * once both the catalog and the free GPUs are known, and never over the person's own choice.
   */
  override willUpdate(): void {
    if (this.#picked) return;
    const c = this.#catalog.value;
    if (!c) return;
    const rows = this.#availability.value?.clusters;
    const failed = this.#availability.status === TaskStatus.ERROR;
    if (!rows && !failed) return;
    this.offering = preferredOffering(c.offerings, rows ?? []) ?? "";
    this.#picked = true;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    // Free GPUs, and whether the person may start another session, change as sessions start and stop.
    this.#unsubscribe = onSessionsChanged(() => {
      void this.#availability.run();
      void this.#preview.run();
    }, 1000);
  }
  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#unsubscribe?.();
  }

  /**
   * The preview's answer for the choices on screen, when it says the session could not start now. While a
   * refresh runs the last answer stays on screen (renderTask), and so does what it says about Create.
   */
  #refusal(): { preview: CostPreview; text: RefusalText } | undefined {
    const p = this.#preview.value;
    if (this.#preview.status === TaskStatus.ERROR || !p?.refusalText || p.offering !== this.offering) return undefined;
    return { preview: p, text: p.refusalText };
  }

  async #submit(e: SubmitEvent): Promise<void> {
    e.preventDefault();
    if (this.#refusal()) return;
    const asks = this.#asks();
    const body = {
      offering: this.offering,
      preset: this.preset,
      image: this.image,
      ...(this.name.trim() ? { name: this.name.trim() } : {}),
      ...(this.cluster ? { cluster_id: this.cluster } : {}),
      ...(asks.idle !== undefined ? { idle_timeout_minutes: asks.idle } : {}),
      ...(asks.runtime !== undefined ? { max_runtime_minutes: asks.runtime } : {}),
      ...(Object.keys(this.mounts).length
        ? {
            volumes: Object.entries(this.mounts).map(([volume, m]) => ({
              volume,
              mount_path: m.path,
              read_only: m.readOnly,
            })),
          }
        : {}),
    };
    this.busy = true;
    this.error = undefined;
    try {
      const s = await createSession(body, this.#keys.for(body));
      router.navigate(`/sessions/${encodeURIComponent(s.id)}`);
    } catch (err) {
      this.error = err;
      this.busy = false;
      await this.updateComplete;
      this.renderRoot.querySelector<HTMLElement>("berth-error-panel")?.scrollIntoView({ block: "center" });
      // A refusal the preview did not foresee (a colleague's session took the credits or the quota since):
      // ask again, so the Cost step explains it and Create stays off until something changes.
      if (err instanceof ApiError && err.code === "quota_exceeded") void this.#preview.run();
    }
  }

  #offeringStep(c: Catalog) {
    const rows = this.#availability.value?.clusters ?? [];
    return html`<fieldset data-testid="step-offering">
      <legend>1. GPU offering</legend>
      ${
        c.offerings.length === 0
          ? html`<berth-empty-state heading="No offering is available">Ask an administrator to add or enable a GPU offering.</berth-empty-state>`
          : html`<div class="choices">
            ${c.offerings.map((o) => {
              const avail = roomForOffering(rows, o);
              const id = `off-${o.name}`;
              return html`<label class="choice" for=${id}>
                <input type="radio" id=${id} name="offering" value=${o.name} .checked=${this.offering === o.name} @change=${() => {
                  this.offering = o.name;
                  this.#picked = true;
                  this.cluster = "";
                }} data-testid="offering-${o.name}" />
                <span class="choice-body">
                  <strong>${o.display_name}</strong>
                  <span data-testid="offering-tier-${o.name}">${tierLabel(o)} · ${o.tier}</span>
                  <span>${formatCredits(o.hourly_credit_rate)} credits / hour</span>
                  <span class=${avail.free > 0 ? "tone-ok" : "tone-warn"} data-testid="offering-free-${o.name}">${this.#availability.value ? `${avail.free} of ${avail.total} ${avail.unit} free now` : "checking free GPUs…"}</span>
                </span>
              </label>`;
            })}
          </div>`
      }
    </fieldset>`;
  }

  #presetStep(c: Catalog) {
    return html`<fieldset>
      <legend>2. Resources</legend>
      <div class="field"><label for="preset">Preset</label>
        <select id="preset" name="preset" data-testid="preset" @change=${(e: Event) => (this.preset = (e.target as HTMLSelectElement).value)}>
          ${c.presets.map((p) => html`<option value=${p.name} ?selected=${p.name === this.preset}>${p.display_name} — ${p.cpu} CPU, ${p.memory} memory${p.gpu_count ? `, ${p.gpu_count} GPU` : ""}</option>`)}
        </select>
      </div>
    </fieldset>`;
  }

  #imageStep(c: Catalog) {
    return html`<fieldset>
      <legend>3. Image</legend>
      ${
        c.images.length === 0
          ? html`<p class="muted">No image is available. Ask an administrator, or import one of your own.</p>`
          : html`<div class="choices">${c.images.map((img) => {
              const tag = imageTag(img, auth.userId);
              const id = `img-${img.name}`;
              return html`<label class="choice" for=${id}>
              <input type="radio" id=${id} name="image" value=${img.name} .checked=${this.image === img.name} @change=${() => (this.image = img.name)} data-testid="image-${img.name}" />
              <span class="choice-body"><strong>${img.display_name} ${tag === "yours" ? html`<span class="badge tone-info" data-testid="image-yours">Yours</span>` : tag === "private" ? html`<span class="badge tone-muted">Private</span>` : nothing}</strong>
                <span class="muted">${img.kind}</span><code class="muted">${img.image}</code></span>
            </label>`;
            })}</div>`
      }
    </fieldset>`;
  }

  #clusterStep(c: Catalog) {
    const offering = c.offerings.find((o) => o.name === this.offering);
    const preset = c.presets.find((p) => p.name === this.preset);
    const gpus = preset?.gpu_count || offering?.gpu_count || 1;
    const choices = offering
      ? clustersForModel(this.#availability.value?.clusters ?? [], offering.gpu_model, gpus, offering.fraction)
      : [];
    return html`<fieldset>
      <legend>4. Where and what to call it</legend>
      <div class="grid2">
        <div class="field"><label for="cluster">Cluster</label>
          <select id="cluster" name="cluster" data-testid="cluster-pin" aria-describedby="cluster-hint" @change=${(e: Event) => (this.cluster = (e.target as HTMLSelectElement).value)}>
            <option value="" ?selected=${!this.cluster}>Any cluster (recommended)</option>
            ${choices.map((ch) => html`<option value=${ch.id} ?selected=${ch.id === this.cluster}>${ch.name} — ${ch.free} of ${ch.total} free${ch.fits ? "" : " (would wait)"}</option>`)}
          </select>
          <p class="hint" id="cluster-hint">Pinning waits for that cluster even when another has room.</p>
        </div>
        <div class="field"><label for="name">Name (optional)</label><input id="name" name="name" maxlength="128" .value=${this.name} @input=${(e: Event) => (this.name = (e.target as HTMLInputElement).value)} placeholder="my-experiment" data-testid="session-name" /></div>
      </div>
    </fieldset>`;
  }

  #limitsStep() {
    const problems = this.#askProblems();
    return html`<fieldset data-testid="step-limits">
      <legend>5. Idle pause and time limit (optional)</legend>
      ${renderTask(this.#rules, {
        pendingLabel: "Loading your resource policy…",
        errorHeading: "Your resource policy could not be loaded",
        complete: (r) => {
          if (!r)
            return html`<p class="muted" data-testid="limits-policy">Your organization's resource policy decides when an idle session is paused and how long one may run.</p>`;
          const idleOff = r.timeout_minutes === 0;
          return html`<p class="hint" data-testid="limits-policy">${
            idleOff
              ? "Your resource policy does not pause idle sessions."
              : `A session nobody uses (no GPU work, no typing, no busy kernel) is paused after ${minutesText(r.timeout_minutes)}, with warnings first; you may choose between ${minutesText(r.min_timeout_minutes)} and ${minutesText(r.max_timeout_minutes)}.`
          } Any session is paused after ${minutesText(r.max_runtime_minutes)} of running; you may choose less. Pausing keeps your files; resume to carry on.</p>
          <div class="grid2">
            <div class="field"><label for="idle-timeout">Idle timeout (minutes)</label>
              <input id="idle-timeout" type="number" inputmode="numeric" min=${r.min_timeout_minutes} max=${r.max_timeout_minutes} step="1"
                ?disabled=${idleOff} placeholder=${String(r.timeout_minutes)} .value=${this.idleMinutes}
                aria-invalid=${problems.idle ? "true" : "false"} aria-describedby=${problems.idle ? "idle-timeout-problem" : nothing}
                @input=${(e: Event) => (this.idleMinutes = (e.target as HTMLInputElement).value)} data-testid="idle-timeout" />
              ${problems.idle ? html`<p class="tone-warn" id="idle-timeout-problem" data-testid="idle-timeout-problem">${problems.idle}</p>` : nothing}
            </div>
            <div class="field"><label for="max-runtime">Maximum running time (hours)</label>
              <input id="max-runtime" type="number" inputmode="decimal" min="0.25" max=${r.max_runtime_minutes / 60} step="0.25"
                placeholder=${String(r.max_runtime_minutes / 60)} .value=${this.runtimeHours}
                aria-invalid=${problems.runtime ? "true" : "false"} aria-describedby=${problems.runtime ? "max-runtime-problem" : nothing}
                @input=${(e: Event) => (this.runtimeHours = (e.target as HTMLInputElement).value)} data-testid="max-runtime" />
              ${problems.runtime ? html`<p class="tone-warn" id="max-runtime-problem" data-testid="max-runtime-problem">${problems.runtime}</p>` : nothing}
            </div>
          </div>`;
        },
      })}
    </fieldset>`;
  }

  #toggleVolume(v: StorageVolume, on: boolean) {
    const next = { ...this.mounts };
    // Shared with the member read-only: mounted read-only (asking to write is refused).
    if (on)
      next[v.id] = {
        path: `/home/jovyan/${v.name.replace(/[^A-Za-z0-9._-]+/g, "-")}`,
        readOnly: v.shared_with_me === "read_only",
      };
    else delete next[v.id];
    this.mounts = next;
  }

  #volumeStep() {
    return html`<fieldset data-testid="step-volumes">
      <legend>6. Volumes (optional)</legend>
      <p class="hint">Files on a volume outlive the session. <a href="/storage/volumes">Manage volumes</a></p>
      ${renderTask(this.#volumes, {
        pendingLabel: "Loading your volumes…",
        errorHeading: "Your volumes could not be loaded",
        isEmpty: (r) => r.data.length === 0,
        empty: () =>
          html`<p class="muted" data-testid="no-volumes">You have no volume yet. <a href="/storage/volumes">Create one</a> to keep files between sessions.</p>`,
        complete: (r) =>
          html`<ul class="volume-list" style="list-style:none;padding:0">${r.data.map((v) => {
            const m = this.mounts[v.id];
            const id = `vol-${v.id}`;
            const pinConflict = !!m && !!v.bound_cluster && !!this.cluster && this.cluster !== v.bound_cluster;
            return html`<li data-testid="volume-choice" data-volume-id=${v.id} style="margin-bottom:.75rem">
              <label class="check" for=${id}><input type="checkbox" id=${id} .checked=${!!m} ?disabled=${v.locked} @change=${(e: Event) => this.#toggleVolume(v, (e.target as HTMLInputElement).checked)} />
                <strong>${v.name}</strong> <span class="muted">${v.size_gb} GB on ${v.pool}</span></label>
              ${v.shared_with_me ? html`<span class="badge tone-muted" data-testid="volume-shared">Shared with you · ${v.shared_with_me === "read_only" ? "read-only" : "read-write"}</span>` : nothing}
              ${v.locked ? html`<span class="badge tone-warn" data-testid="volume-locked">Locked${v.lock_reason ? `: ${v.lock_reason}` : ""}: cannot be mounted</span>` : nothing}
              ${v.bound_cluster ? html`<p class="hint" data-testid="volume-keeps-cluster">Its claim is on ${v.bound_cluster}: a session mounting it runs there until the claim is released (about 15 minutes after its last session).</p>` : nothing}
              ${pinConflict ? html`<p class="tone-warn" data-testid="volume-pin-conflict">You pinned another cluster: this session would be refused. Choose "Any cluster" or ${v.bound_cluster}.</p>` : nothing}
              ${
                m
                  ? html`<div class="row" style="align-items:flex-end">
                    <div class="field"><label for="${id}-path">Mount at</label><input id="${id}-path" .value=${m.path} @input=${(e: Event) => (this.mounts = { ...this.mounts, [v.id]: { ...m, path: (e.target as HTMLInputElement).value } })} required /></div>
                    <label class="check"><input type="checkbox" .checked=${m.readOnly} ?disabled=${v.shared_with_me === "read_only"} @change=${(e: Event) => (this.mounts = { ...this.mounts, [v.id]: { ...m, readOnly: (e.target as HTMLInputElement).checked } })} /> read-only</label>
                  </div>`
                  : nothing
              }
            </li>`;
          })}</ul>`,
      })}
    </fieldset>`;
  }

  #costStep() {
    return html`<fieldset data-testid="cost-preview">
      <legend>7. Cost</legend>
      <div class="field" style="max-width:14rem"><label for="duration">If it runs for</label>
        <select id="duration" @change=${(e: Event) => (this.duration = Number((e.target as HTMLSelectElement).value))}>
          ${DURATIONS.map((d) => html`<option value=${d.s} ?selected=${d.s === this.duration}>${d.label}</option>`)}
        </select></div>
      ${renderTask(this.#preview, {
        pendingLabel: "Working out the cost…",
        errorHeading: "The cost could not be worked out",
        complete: (p) =>
          p
            ? html`<p class="cost"><strong data-testid="cost-total">${formatCredits(p.cost)} credits</strong> for ${DURATIONS.find((d) => d.s === p.duration_seconds)?.label ?? `${p.duration_seconds} s`}
                  at ${formatCredits(p.hourly_rate)} credits/hour (${p.gpu_count} × ${p.gpu_model}). Paused time is free.</p>
                ${
                  p.storage.size_gb > 0
                    ? html`<p data-testid="cost-storage">Storage: ${formatCredits(p.storage.hourly_rate)} credits/hour for ${p.storage.size_gb} GB of volumes, billed while they exist, whether the session runs or not.</p>`
                    : nothing
                }
                ${
                  !p.can_start
                    ? this.#refusalPanel()
                    : p.gpu_available_now
                      ? html`<p class="tone-ok" data-testid="gpu-now">A GPU is free now: the session should start within seconds.</p>`
                      : html`<p class="tone-warn" data-testid="will-queue">No ${p.gpu_model} is free right now: the session will wait in the queue and start when one frees up. You are not charged while it waits.</p>`
                }`
            : nothing,
      })}
    </fieldset>`;
  }

  #refusalPanel() {
    const r = this.#refusal();
    if (!r) return nothing;
    const { text, preview } = r;
    const remedy = text.remedy;
    return html`<div class="refusal" data-testid="start-refusal" data-code=${preview.refusal?.code ?? ""} data-limit=${String(preview.refusal?.details.limit ?? "")}>
      <p class="refusal-headline"><strong>${text.headline}.</strong> <span data-testid="refusal-explanation">${text.explanation}</span></p>
      <p class="muted refusal-message">The API says: <span data-testid="refusal-message">${preview.refusal?.message ?? ""}</span></p>
      <p class="refusal-remedy">${
        "href" in remedy
          ? html`<a class="button" href=${remedy.href} data-testid="refusal-remedy" data-kind=${remedy.kind}>${remedy.label}</a>`
          : html`<span data-testid="refusal-remedy" data-kind=${remedy.kind}>${remedy.label}.</span>`
      }</p>
    </div>`;
  }

  #actions() {
    const refused = this.#refusal();
    const p = this.#askProblems();
    const limitsWrong = !!(p.idle || p.runtime);
    return html`<div class="row">
      <button class="primary" type="submit" ?disabled=${this.busy || !this.offering || !this.preset || !this.image || !!refused || limitsWrong}
        aria-describedby=${refused ? "create-blocked" : nothing} data-testid="create-session">${this.busy ? "Creating…" : "Create session"}</button>
      <a class="button" href="/sessions">Cancel</a>
      ${refused ? html`<p class="tone-warn" id="create-blocked" data-testid="create-blocked">Cannot start now: ${refused.text.headline.toLowerCase()} (see Cost).</p>` : nothing}
    </div>`;
  }

  override render() {
    return html`<p><a href="/sessions">← Sessions</a></p>
      <h1>New session</h1>
      ${renderTask(this.#catalog, {
        pendingLabel: "Loading offerings, presets and images…",
        errorHeading: "The catalog could not be loaded",
        complete: (c) => html`<form @submit=${this.#submit} data-testid="create-session-form">
          ${this.#offeringStep(c)} ${this.#presetStep(c)} ${this.#imageStep(c)} ${this.#clusterStep(c)} ${this.#limitsStep()} ${this.#volumeStep()} ${this.#costStep()}
          ${this.error ? html`<berth-error-panel heading="The session was not created" .error=${this.error}></berth-error-panel>` : nothing}
          ${this.#actions()}
        </form>`,
      })}`;
  }
}
