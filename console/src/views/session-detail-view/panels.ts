// The panels of a session's page, each from what the view has loaded: connect, details, volumes,
// what happened, usage, and (administrators) its Kubernetes resource and events.
import type { Task } from "@lit/task";
import { html, nothing } from "lit";
import type { Session } from "../../api/openapi.gen.ts";
import type { loadSessionResource, loadSessionResourceEvents, loadSessionUsage } from "../../app/sessions.ts";
import type { loadSessionVolumes } from "../../app/storage.ts";
import { renderTask } from "../../components/task-states.ts";
import { formatCredits, formatDuration, formatPercent, formatRelative, formatTime } from "../../data/format.ts";
import { timeline } from "../../data/timeline.ts";
import { tierLabel } from "../../data/wizard.ts";
import { SESSION_TEST_IDS } from "../../test-ids/session.ts";

export type ConnectKind = "lab" | "terminal" | "code";
const CONNECT_LABEL: Record<ConnectKind, string> = {
  lab: "Open notebook",
  terminal: "Open terminal",
  code: "Open code editor",
};

type Mounts = Awaited<ReturnType<typeof loadSessionVolumes>>;
type Usage = Awaited<ReturnType<typeof loadSessionUsage>>;
export interface Resource {
  resource: Awaited<ReturnType<typeof loadSessionResource>>;
  events: Awaited<ReturnType<typeof loadSessionResourceEvents>>;
}

/** The connect buttons while it runs (each link made on demand: connect in the view). */
export function connectPanel(s: Session, p: { connectError: unknown; onConnect: (kind: ConnectKind) => void }) {
  const running = s.phase === "Running";
  return html`<section class="card" aria-labelledby="connect-h">
    <h2 id="connect-h">Connect</h2>
    ${
      running
        ? html`<div class="actions">${(["lab", "terminal", "code"] as const).map(
            (k) =>
              html`<button type="button" class=${k === "lab" ? "primary" : ""} @click=${() => p.onConnect(k)} data-testid=${SESSION_TEST_IDS.connect(k)}>${CONNECT_LABEL[k]}<span class="visually-hidden"> (opens in a new tab)</span></button>`,
          )}</div>`
        : html`<p class="muted">Connect links work while the session is Running.</p>`
    }
    ${p.connectError ? html`<berth-error-panel heading="No link could be made" .error=${p.connectError}></berth-error-panel>` : nothing}
  </section>`;
}

export function factsPanel(s: Session) {
  return html`<section class="card" aria-labelledby="facts-h">
    <h2 id="facts-h">Details</h2>
    <dl class="facts">
      <dt>Id</dt><dd><code>${s.id}</code></dd>
      <dt>Cluster</dt><dd data-testid=${SESSION_TEST_IDS.cluster}>${s.cluster_id ?? "—"}${s.cluster_pin ? html` <span class="muted">(pinned to ${s.cluster_pin})</span>` : nothing}</dd>
      <dt>Node</dt><dd data-testid=${SESSION_TEST_IDS.node}>${s.node ?? "—"}</dd>
      <dt>GPU</dt><dd data-testid=${SESSION_TEST_IDS.gpu}>${tierLabel({ ...s, slice_memory_mib: s.gpu_slice_memory_mib, fraction: s.gpu_fraction, mig_profile: s.gpu_mig_profile })}</dd>
      <dt>Card</dt><dd data-testid=${SESSION_TEST_IDS.cards}>${s.gpu_cards?.length ? s.gpu_cards.join(", ") : "—"}</dd>
      <dt>Offering</dt><dd>${s.offering} · ${formatCredits(s.hourly_credit_rate)} credits/hour</dd>
      <dt>Capacity</dt><dd data-testid=${SESSION_TEST_IDS.capacityClass} data-class=${s.capacity_class}>${
        s.capacity_class === "borrowed"
          ? `Borrowed: charged at the borrowed rate, ${s.rate_multiplier}× the offering's (${formatCredits(Math.round(Number(s.hourly_credit_rate) * s.rate_multiplier))} credits/hour); may be reclaimed after a warning`
          : "Guaranteed: charged at the offering's rate; never reclaimed"
      }</dd>
      <dt>Preset</dt><dd>${s.preset}</dd>
      <dt>Image</dt><dd>${s.image}</dd>
      <dt>Priority</dt><dd>${s.priority}</dd>
      <dt>Restarts</dt><dd>${s.restarts}</dd>
      <dt>Created</dt><dd>${formatTime(s.created_at)}</dd>
      ${s.started_at ? html`<dt>Started</dt><dd>${formatTime(s.started_at)}</dd>` : nothing}
    </dl>
  </section>`;
}

export function mountsPanel(mounts: Task<readonly unknown[], Mounts>) {
  return html`<section class="card" aria-labelledby="mounts-h" data-testid=${SESSION_TEST_IDS.mounts}>
    <h2 id="mounts-h">Volumes</h2>
    ${renderTask(mounts, {
      pendingLabel: "Loading its volumes…",
      errorHeading: "Its volumes could not be loaded",
      isEmpty: (r) => r.data.length === 0,
      empty: () =>
        html`<p class="muted">No volume: files in this session live only as long as its pod. <a href="/storage/volumes">Volumes</a> keep them.</p>`,
      complete: (r) =>
        html`<ul>${r.data.map((v) => {
          const m = v.mounts?.[0];
          return html`<li data-testid=${SESSION_TEST_IDS.mount} data-volume-id=${v.id}><strong>${v.name}</strong> at <code>${m?.mount_path ?? "/mnt/data"}</code>
          ${m?.read_only ? html`<span class="badge tone-muted">read-only</span>` : nothing}
          <span class="muted">${v.size_gb} GB${v.bound_cluster ? ` · claim on ${v.bound_cluster}` : ""}${v.deleted_at ? " · deleted" : ""}</span></li>`;
        })}</ul><p class="hint">Files there are kept when the session pauses, restarts or ends.</p>`,
    })}
  </section>`;
}

export function timelinePanel(s: Session) {
  return html`<section class="card" aria-labelledby="tl-h">
    <h2 id="tl-h">What happened</h2>
    <ol class="timeline" data-testid=${SESSION_TEST_IDS.timeline}>
      ${timeline(s).map(
        (e) => html`<li class="tone-${e.tone}">
          <time datetime=${e.at} title=${formatTime(e.at)}>${formatRelative(e.at)}</time>
          <span class="what">${e.title}</span>${e.detail ? html`<span class="why">${e.detail}</span>` : nothing}
        </li>`,
      )}
    </ol>
  </section>`;
}

export function usagePanel(usage: Task<readonly unknown[], Usage>) {
  return html`<section class="card" aria-labelledby="usage-h">
    <h2 id="usage-h">Usage</h2>
    ${renderTask(usage, {
      pendingLabel: "Loading usage…",
      errorHeading: "Usage is not available",
      isEmpty: (u) => u.totals.samples === 0,
      empty: () =>
        html`<p class="muted" data-testid=${SESSION_TEST_IDS.usageEmpty}>No usage sample yet. The cluster's operator reports usage every few seconds while the session runs.</p>`,
      complete: (u) => html`<dl class="facts">
          <dt>GPU time</dt><dd data-testid=${SESSION_TEST_IDS.usageGpuTime}>${formatDuration(u.totals.gpu_seconds)}</dd>
          <dt>GPU utilisation</dt><dd>${formatPercent(u.latest?.gpu_utilization)}</dd>
          ${u.latest?.gpu_memory_mib != null ? html`<dt>GPU memory</dt><dd>${u.latest.gpu_memory_mib} MiB</dd>` : nothing}
        </dl>
        ${
          u.series.some((p) => p.gpu_utilization !== null)
            ? html`<berth-usage-chart label="GPU utilisation %" .max=${100} .values=${u.series.map((p) => p.gpu_utilization)}></berth-usage-chart>`
            : html`<berth-usage-chart label="GPU-seconds per sample" .values=${u.series.map((p) => p.gpu_seconds)}></berth-usage-chart>`
        }`,
    })}
  </section>`;
}

/** An administrator's view of its Kubernetes resource and events, loaded once opened. */
export function resourcePanel(
  resource: Task<readonly unknown[], Resource | undefined>,
  p: { shown: boolean; onToggle: (open: boolean) => void },
) {
  return html`<details class="card" @toggle=${(e: Event) => p.onToggle((e.target as HTMLDetailsElement).open)}>
    <summary>Kubernetes resource and events</summary>
    ${
      p.shown
        ? renderTask(resource, {
            pendingLabel: "Loading the resource…",
            complete: (r) =>
              r
                ? html`<h3>Events</h3>
                  ${
                    r.events.data.length === 0
                      ? html`<p class="muted">No event (Kubernetes keeps them for an hour).</p>`
                      : html`<div class="table-wrap"><table><caption class="visually-hidden">Kubernetes events</caption><thead><tr><th scope="col">Type</th><th scope="col">Reason</th><th scope="col">Message</th><th scope="col">Last seen</th></tr></thead>
                        <tbody>${r.events.data.map((e) => html`<tr><td>${e.type}</td><td>${e.reason}</td><td>${e.message}${e.count > 1 ? html` <span class="muted">(×${e.count})</span>` : nothing}</td><td>${formatRelative(e.last_timestamp)}</td></tr>`)}</tbody></table></div>`
                  }
                  <h3>Resource</h3><pre class="yaml" tabindex="0">${r.resource.yaml}</pre>`
                : nothing,
          })
        : nothing
    }
  </details>`;
}
