// Idle auto-pause and time limits per resource policy (docs/dev/idle-and-limits.md): for each policy
// (global, an organization's, a project's), the idle timeout, the bounds a session may ask within, the GPU
// threshold, how often an owner may keep a session running, and the maximum running time. An empty field
// takes the next scope's value, then the default. Changing a policy is super_admin's: others read the
// fields and are told who changes them (the API refuses them too).
import { Task } from "@lit/task";
import { html, LitElement, nothing } from "lit";
import type { ResourcePolicy } from "../../api/openapi.gen.ts";
import { auth } from "../../app/context.ts";
import "../../components/error-panel/index.ts";
import { loadResourcePolicies, updateResourcePolicy } from "../../app/catalog.ts";
import { renderTask } from "../../components/task-states.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { IDLE_LIMITS_TEST_IDS } from "../../test-ids/idle-limits.ts";
import { SHELL_TEST_IDS } from "../../test-ids/shell.ts";

const FIELDS = [
  ["timeout_minutes", "Idle timeout (min)", "60; 0 turns idle pausing off"],
  ["min_timeout_minutes", "Shortest a session may ask (min)", "20"],
  ["max_timeout_minutes", "Longest a session may ask (min)", "480"],
  ["gpu_utilization_percent", "GPU under this counts as idle (%)", "5"],
  ["keep_running_max", "Keep-running per run", "3"],
] as const;

export class BerthAdminIdleLimitsView extends LitElement {
  static override styles = [tokens, shared, page];
  static override properties = { error: { state: true }, notice: { state: true } };
  declare error: unknown;
  declare notice: string | undefined;

  #policies = new Task(this, {
    task: async (_a, { signal }) => loadResourcePolicies(signal),
    args: () => [],
  });

  constructor() {
    super();
    this.error = undefined;
    this.notice = undefined;
  }

  async #save(e: SubmitEvent, p: ResourcePolicy): Promise<void> {
    e.preventDefault();
    const f = new FormData(e.target as HTMLFormElement);
    const num = (k: string) => {
      const v = String(f.get(k) ?? "").trim();
      return v === "" ? undefined : Number(v);
    };
    const idle = Object.fromEntries(FIELDS.flatMap(([k]) => (num(k) === undefined ? [] : [[k, num(k)]])));
    const hours = num("max_session_hours");
    const { max_session_hours: _old, ...limits } = p.limits;
    this.error = undefined;
    this.notice = undefined;
    try {
      await updateResourcePolicy(p.name, {
        idle,
        limits: { ...limits, ...(hours === undefined ? {} : { max_session_hours: hours }) },
      });
      this.notice = `Saved ${p.name}.`;
      void this.#policies.run();
    } catch (err) {
      this.error = err;
    }
  }

  #policy(p: ResourcePolicy) {
    const scope = p.scope.kind === "global" ? "Everyone" : `${p.scope.kind} ${p.scope.id}`;
    const idle = p.idle as Record<string, number | undefined>;
    const ro = !auth.isSuperAdmin;
    return html`<section class="card" data-testid=${IDLE_LIMITS_TEST_IDS.policy(p.name)}>
      <h2>${p.name} <span class="muted">(${scope})</span></h2>
      <form @submit=${(e: SubmitEvent) => this.#save(e, p)} class="form-grid">
        ${FIELDS.map(
          ([k, label, hint]) => html`<label>${label}
            <input name=${k} type="number" min="0" step=${k === "gpu_utilization_percent" ? "0.5" : "1"} .value=${idle[k] === undefined ? "" : String(idle[k])} placeholder=${hint} ?readonly=${ro} data-testid=${IDLE_LIMITS_TEST_IDS.field(p.name, k)} />
          </label>`,
        )}
        <label>Maximum running time (h)
          <input name="max_session_hours" type="number" min="1" step="1" .value=${p.limits.max_session_hours === undefined ? "" : String(p.limits.max_session_hours)} placeholder="24" ?readonly=${ro} data-testid=${IDLE_LIMITS_TEST_IDS.field(p.name, "max_session_hours")} />
        </label>
        ${ro ? nothing : html`<div><button type="submit" class="primary" data-testid=${IDLE_LIMITS_TEST_IDS.save(p.name)}>Save</button></div>`}
      </form>
    </section>`;
  }

  override render() {
    return html`<div class="page-head"><h1>Idle &amp; time limits</h1></div>
      <p class="muted">Sessions idle for the timeout (GPU under the threshold, no typing, no busy kernel) are paused after warnings at 15 and 5 minutes; every session is paused at its maximum running time. Empty: the wider scope's value, then the default shown.</p>
      ${auth.isSuperAdmin ? nothing : html`<p data-testid=${IDLE_LIMITS_TEST_IDS.readOnly}>Only a platform administrator (super_admin) changes these; ask one, or ask for a higher limit of your own under Limits.</p>`}
      ${this.notice ? html`<p role="status" data-testid=${SHELL_TEST_IDS.notice}>${this.notice}</p>` : nothing}
      ${this.error ? html`<berth-error-panel heading="The policy was not changed" .error=${this.error}></berth-error-panel>` : nothing}
      ${renderTask(this.#policies, {
        pendingLabel: "Loading policies…",
        errorHeading: "Policies could not be loaded",
        complete: (r) => html`${r.data.map((p) => this.#policy(p))}`,
      })}`;
  }
}
