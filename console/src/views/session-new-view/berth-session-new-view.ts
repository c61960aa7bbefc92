// The create wizard, one page in steps: offering (GPU model, tier, hourly rate, free GPUs now per
// cluster), preset, image (the member's private images tagged), optional cluster pin, name, the volumes
// to mount (what is mountable, what is read-only, which would keep the session on one cluster), its idle
// timeout and maximum running time within the resource policy's bounds (checked as typed), its capacity
// class (guaranteed, or borrowed with the reclaim terms spelled out), and the
// cost (storage included) before confirming. When no GPU is free it says the session will queue, and where; when the session could
// not start at all (credits, spending limits, the policy), Create is disabled with the reason in plain
// words and what to do about it (data/refusal.ts).
// Each step renders from its own file in steps/, from the wizard's state and callbacks: the steps are
// parts of one form, which a custom element per step would split across shadow roots.
import { Task, TaskStatus } from "@lit/task";
import { html, LitElement, nothing } from "lit";
import { ApiError, newIdempotencyKey } from "../../api/client.ts";
import type { CostPreview } from "../../api/openapi.gen.ts";
import { auth, router } from "../../app/context.ts";
import { onSessionsChanged } from "../../app/live.ts";
import "../../components/error-panel/index.ts";
import { loadOfferings, loadResourcePresets } from "../../app/catalog.ts";
import { loadImages } from "../../app/images.ts";
import { loadEffectiveLimits } from "../../app/quotas.ts";
import { createSession, loadGpuAvailability, previewSessionCost } from "../../app/sessions.ts";
import { loadVolumes } from "../../app/storage.ts";
import { renderTask } from "../../components/task-states.ts";
import { preferredOffering } from "../../data/quotas.ts";
import { type IdleRules, reclaimAskProblems } from "../../data/reclaim.ts";
import type { RefusalText } from "../../data/refusal.ts";
import { IdempotencyKeys, sortImages } from "../../data/wizard.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { NEW_SESSION_TEST_IDS } from "../../test-ids/new-session.ts";
import { checks } from "../volumes-view/styles.ts";
import { type CapacityChoice, capacityStep } from "./steps/capacity.ts";
import { clusterStep, imageStep, presetStep } from "./steps/choices.ts";
import { costStep } from "./steps/cost.ts";
import { limitsStep } from "./steps/limits.ts";
import { offeringStep } from "./steps/offering.ts";
import type { Catalog, Previewed } from "./steps/types.ts";
import { type Mounts, toggledMounts, volumesStep } from "./steps/volumes.ts";
import { styles } from "./styles.ts";

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
    capacity: { state: true },
  };
  /** Guaranteed by default; borrowed by the person's opt-in (docs/dev/fair-share.md). */
  declare capacity: CapacityChoice;
  /** The asked idle timeout in minutes and maximum running time in hours, as typed; "": the policy's. */
  declare idleMinutes: string;
  declare runtimeHours: string;
  /** Volumes to mount, by id: where, and read-only or not. */
  declare mounts: Mounts;
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
    task: async ([offering, preset, duration, volumes, capacity], { signal }): Promise<Previewed | undefined> => {
      if (!offering) return undefined;
      await new Promise((r) => setTimeout(r, 150)); // debounce quick changes
      signal.throwIfAborted();
      const p = await previewSessionCost(
        {
          offering: offering as string,
          ...(preset ? { preset: preset as string } : {}),
          duration_seconds: duration as number,
          ...(volumes ? { volumes: (volumes as string).split(",") } : {}),
          capacity_class: capacity as CapacityChoice,
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
    args: () => [this.offering, this.preset, this.duration, Object.keys(this.mounts).sort().join(","), this.capacity],
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
    this.capacity = "guaranteed";
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
      capacity_class: this.capacity,
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

  #steps(c: Catalog) {
    const availability = this.#availability.value;
    return html`${offeringStep({
      catalog: c,
      availability,
      offering: this.offering,
      onPick: (name) => {
        this.offering = name;
        this.#picked = true;
        this.cluster = "";
      },
    })}
      ${presetStep({ catalog: c, preset: this.preset, onPick: (name) => (this.preset = name) })}
      ${imageStep({ catalog: c, image: this.image, me: auth.userId, onPick: (name) => (this.image = name) })}
      ${clusterStep({
        catalog: c,
        availability,
        offering: this.offering,
        preset: this.preset,
        cluster: this.cluster,
        name: this.name,
        onCluster: (id) => (this.cluster = id),
        onName: (name) => (this.name = name),
      })}
      ${limitsStep({
        rules: this.#rules,
        problems: this.#askProblems(),
        idleMinutes: this.idleMinutes,
        runtimeHours: this.runtimeHours,
        onIdle: (m) => (this.idleMinutes = m),
        onRuntime: (h) => (this.runtimeHours = h),
      })}
      ${volumesStep({
        volumes: this.#volumes,
        mounts: this.mounts,
        cluster: this.cluster,
        onToggle: (v, on) => (this.mounts = toggledMounts(this.mounts, v, on)),
        onMounts: (m) => (this.mounts = m),
      })}
      ${capacityStep({ choice: this.capacity, preview: this.#preview, onPick: (c) => (this.capacity = c) })}
      ${costStep({
        preview: this.#preview,
        duration: this.duration,
        refusal: this.#refusal(),
        onDuration: (sec) => (this.duration = sec),
      })}`;
  }

  #actions() {
    const refused = this.#refusal();
    const p = this.#askProblems();
    const limitsWrong = !!(p.idle || p.runtime);
    return html`<div class="row">
      <button class="primary" type="submit" ?disabled=${this.busy || !this.offering || !this.preset || !this.image || !!refused || limitsWrong}
        aria-describedby=${refused ? "create-blocked" : nothing} data-testid=${NEW_SESSION_TEST_IDS.create}>${this.busy ? "Creating…" : "Create session"}</button>
      <a class="button" href="/sessions">Cancel</a>
      ${refused ? html`<p class="tone-warn" id="create-blocked" data-testid=${NEW_SESSION_TEST_IDS.createBlocked}>Cannot start now: ${refused.text.headline.toLowerCase()} (see Cost).</p>` : nothing}
    </div>`;
  }

  override render() {
    return html`<p><a href="/sessions">← Sessions</a></p>
      <h1>New session</h1>
      ${renderTask(this.#catalog, {
        pendingLabel: "Loading offerings, presets and images…",
        errorHeading: "The catalog could not be loaded",
        complete: (c) => html`<form @submit=${this.#submit} data-testid=${NEW_SESSION_TEST_IDS.form}>
          ${this.#steps(c)}
          ${this.error ? html`<berth-error-panel heading="The session was not created" .error=${this.error}></berth-error-panel>` : nothing}
          ${this.#actions()}
        </form>`,
      })}`;
  }
}
