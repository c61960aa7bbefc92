// One cluster: its facts, the connection test check by check, its session domain (changing it changes
// every connect link), its nodes with cordon, drain and delete, and deregistration behind a typed
// confirmation (refused by the API while sessions or allocations live on it).
import { Task } from "@lit/task";
import { html, LitElement, nothing } from "lit";
import type { Cluster, ConnectionTestResult, Node } from "../../api/openapi.gen.ts";
import { router } from "../../app/context.ts";
import "../../components/check-list/index.ts";
import { confirmAction } from "../../components/confirm-dialog/index.ts";
import "../../components/error-panel/index.ts";
import "../../components/monitoring-panel/index.ts";
import "../../components/mig-layouts/index.ts";
import "../../components/node-pools/index.ts";
import {
  actOnNode,
  deregisterCluster,
  loadCluster,
  loadNodes,
  setSessionDomain,
  testClusterConnection,
} from "../../app/clusters.ts";
import { renderTask } from "../../components/task-states.ts";
import { statusTone } from "../../data/clusters.ts";
import { formatRelative, formatTime } from "../../data/format.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { CLUSTERS_TEST_IDS } from "../../test-ids/clusters.ts";

type NodeAction = "cordon" | "uncordon" | "drain" | "delete";

export class BerthAdminClusterDetailView extends LitElement {
  static override styles = [tokens, shared, page];
  static override properties = {
    clusterId: { type: String },
    testing: { state: true },
    test: { state: true },
    actionError: { state: true },
    actionResult: { state: true },
    editing: { state: true },
    deleteName: { state: true },
    chartNode: { state: true },
  };
  declare chartNode: string;
  declare clusterId: string;
  declare testing: boolean;
  declare test: ConnectionTestResult | undefined;
  declare actionError: unknown;
  declare actionResult: string | undefined;
  declare editing: boolean;
  declare deleteName: string;

  #cluster = new Task(this, {
    task: async ([id], { signal }) => loadCluster(id as string, signal),
    args: () => [this.clusterId],
  });
  #nodes = new Task(this, {
    task: async ([id], { signal }) => loadNodes(id as string, signal),
    args: () => [this.clusterId],
  });

  constructor() {
    super();
    this.clusterId = "";
    this.chartNode = "";
    this.testing = false;
    this.test = undefined;
    this.actionError = undefined;
    this.actionResult = undefined;
    this.editing = false;
    this.deleteName = "";
  }

  async #act<T>(what: string, fn: () => Promise<T>): Promise<T | undefined> {
    this.actionError = undefined;
    this.actionResult = undefined;
    try {
      const r = await fn();
      this.actionResult = what;
      return r;
    } catch (e) {
      this.actionError = e;
      return undefined;
    }
  }

  async #connectionTest(): Promise<void> {
    this.testing = true;
    this.test = await this.#act("Connection test finished.", () => testClusterConnection(this.clusterId));
    this.testing = false;
    void this.#cluster.run();
  }

  async #saveDomain(e: SubmitEvent): Promise<void> {
    e.preventDefault();
    const domain = String(new FormData(e.target as HTMLFormElement).get("session_domain") ?? "").trim();
    const r = await this.#act("Session domain saved. New connect links use it.", () =>
      setSessionDomain(this.clusterId, domain),
    );
    if (r) {
      this.editing = false;
      void this.#cluster.run();
    }
  }

  async #deregister(c: Cluster): Promise<void> {
    const ok = await confirmAction({
      heading: `Deregister ${c.name}?`,
      body: "The cluster, its nodes and its GPU devices are dropped from Berth; session history is kept. Sessions cannot be placed on it any more.",
      confirmLabel: "Deregister",
      danger: true,
    });
    if (!ok) return;
    const r = await this.#act("Cluster deregistered.", () => deregisterCluster(c.id));
    if (r) router.navigate("/admin/clusters");
  }

  /** The reason typed beside a cordoned node's Uncordon button (required when Berth cordoned it for faults). */
  #reason(n: Node): string | undefined {
    const v = (this.renderRoot.querySelector(`#why-${CSS.escape(n.name)}`) as HTMLInputElement | null)?.value.trim();
    return v || undefined;
  }

  async #nodeAction(n: Node, action: NodeAction, reason?: string): Promise<void> {
    const destructive = action === "drain" || action === "delete";
    if (destructive) {
      const ok = await confirmAction({
        heading: `${action === "drain" ? "Drain" : "Delete"} node ${n.name}?`,
        body:
          action === "drain"
            ? "The node is cordoned and its pods are evicted: sessions on it are placed again elsewhere or queued, and their users are told."
            : "The node object is deleted from the cluster. Sessions on it are placed again elsewhere or queued.",
        confirmLabel: action === "drain" ? "Drain" : "Delete",
        danger: true,
      });
      if (!ok) return;
    }
    const r = await this.#act(`${action} ${n.name}: done.`, () => actOnNode(n.cluster_id, n.name, action, reason));
    if (r) {
      const blocked = r.evictions?.filter((x) => x.result === "blocked" || x.result === "failed") ?? [];
      this.actionResult = `${action} ${n.name}: ${r.outcome}${blocked.length ? ` (${blocked.length} pod(s) could not be evicted: ${blocked.map((b) => `${b.namespace}/${b.pod}`).join(", ")})` : ""}.`;
      void this.#nodes.run();
    }
  }

  #facts(c: Cluster) {
    return html`<div class="page-head">
        <h1>${c.name}</h1>
        <span class="badge tone-${statusTone(c.status)}" data-testid=${CLUSTERS_TEST_IDS.clusterStatus}>${c.status}</span>
      </div>
      <div class="grid2">
        <section class="card" aria-labelledby="facts-h">
          <h2 id="facts-h">Cluster</h2>
          <dl class="facts">
            <dt>Id</dt><dd><code>${c.id}</code></dd>
            <dt>Session domain</dt>
            <dd>
              ${
                this.editing
                  ? html`<form @submit=${this.#saveDomain} class="row" data-testid=${CLUSTERS_TEST_IDS.sessionDomainForm}>
                    <label class="visually-hidden" for="sd">Session domain</label>
                    <input id="sd" name="session_domain" required .value=${c.session_domain} data-testid=${CLUSTERS_TEST_IDS.sessionDomainInput} />
                    <button class="primary" type="submit" data-testid=${CLUSTERS_TEST_IDS.sessionDomainSave}>Save</button>
                    <button type="button" @click=${() => (this.editing = false)}>Cancel</button>
                  </form>`
                  : html`<code data-testid=${CLUSTERS_TEST_IDS.sessionDomain}>${c.session_domain}</code>
                    <button type="button" @click=${() => (this.editing = true)} data-testid=${CLUSTERS_TEST_IDS.sessionDomainEdit} aria-label="Edit session domain">Edit</button>`
              }
            </dd>
            <dt>Nodes / GPUs</dt><dd>${c.inventory.nodes} / ${c.inventory.gpus}</dd>
            <dt>Last report</dt><dd>${formatRelative(c.last_report_at)}</dd>
            <dt>Registered</dt><dd>${formatTime(c.registered_at)}</dd>
            ${c.operator_token ? html`<dt>Operator token</dt><dd>expires ${formatRelative(c.operator_token.expires_at)}</dd>` : nothing}
          </dl>
        </section>
        <section class="card" aria-labelledby="probe-h">
          <h2 id="probe-h">Probe</h2>
          ${
            this.test
              ? html`<p data-testid=${CLUSTERS_TEST_IDS.connectionTestStatus}>Status: <span class="badge tone-${statusTone(this.test.status)}">${this.test.status}</span> in ${this.test.duration_ms} ms ${this.test.server_version ? html`· ${this.test.server_version}` : nothing}</p>
                ${this.test.message ? html`<p>${this.test.message}</p>` : nothing}
                <berth-check-list .checks=${this.test.checks}></berth-check-list>
                ${this.test.missing_permissions?.length ? html`<p class="hint">Missing permissions: ${this.test.missing_permissions.join(", ")}</p>` : nothing}`
              : c.checks
                ? html`<p class="hint">Last probe ${formatRelative(c.probed_at)}</p><berth-check-list .checks=${c.checks}></berth-check-list>`
                : html`<p class="muted">No probe result yet.</p>`
          }
          <button type="button" ?disabled=${this.testing} @click=${this.#connectionTest} data-testid=${CLUSTERS_TEST_IDS.connectionTest}>${this.testing ? "Testing…" : "Test the connection"}</button>
        </section>
      </div>`;
  }

  #nodesTable(nodes: Node[]) {
    return html`<div class="table-wrap"><table data-testid=${CLUSTERS_TEST_IDS.nodesTable}>
      <caption class="visually-hidden">Nodes of this cluster</caption>
      <thead><tr><th scope="col">Node</th><th scope="col">GPU model</th><th scope="col">GPUs used / allocatable</th><th scope="col">State</th><th scope="col">Actions</th></tr></thead>
      <tbody>
        ${nodes.map(
          (n) => html`<tr data-testid=${CLUSTERS_TEST_IDS.nodeRow} data-node=${n.name}>
            <td><code>${n.name}</code></td>
            <td>${n.gpu_model ?? "—"}</td>
            <td>${n.gpu_in_use} / ${n.gpu_allocatable}</td>
            <td>
              <span class="badge ${n.ready ? "tone-ok" : "tone-bad"}">${n.ready ? "Ready" : "Not ready"}</span>
              ${n.schedulable ? nothing : html`<span class="badge tone-warn" data-testid=${CLUSTERS_TEST_IDS.nodeCordoned}>Cordoned</span>`}
            </td>
            <td class="actions">
              ${
                n.schedulable
                  ? html`<button type="button" @click=${() => this.#nodeAction(n, "cordon")} aria-label="Cordon ${n.name}">Cordon</button>`
                  : html`<label class="visually-hidden" for="why-${n.name}">Why uncordon ${n.name}</label>
                    <input id="why-${n.name}" placeholder="Reason (recorded)" data-testid=${CLUSTERS_TEST_IDS.uncordonReason} />
                    <button type="button" @click=${() => this.#nodeAction(n, "uncordon", this.#reason(n))} aria-label="Uncordon ${n.name}">Uncordon</button>`
              }
              <button type="button" class="danger" @click=${() => this.#nodeAction(n, "drain")} aria-label="Drain ${n.name}">Drain</button>
              <button type="button" class="danger" @click=${() => this.#nodeAction(n, "delete")} aria-label="Delete ${n.name}">Delete</button>
            </td>
          </tr>`,
        )}
      </tbody>
    </table></div>`;
  }

  /** Per-card charts of one node: utilisation, memory and temperature of each of its GPUs. */
  #cards(nodes: Node[]) {
    const gpuNodes = nodes.filter((n) => n.gpu_count > 0);
    if (gpuNodes.length === 0) return nothing;
    const node =
      this.chartNode && gpuNodes.some((n) => n.name === this.chartNode) ? this.chartNode : (gpuNodes[0]?.name ?? "");
    const scope = { cluster: this.clusterId, node };
    return html`<section class="card" aria-labelledby="cards-h" data-testid=${CLUSTERS_TEST_IDS.nodeCards}>
      <h2 id="cards-h">Cards of a node</h2>
      <div class="filters"><div class="field"><label for="chart-node">Node</label>
        <select id="chart-node" @change=${(e: Event) => (this.chartNode = (e.target as HTMLSelectElement).value)}>
          ${gpuNodes.map((n) => html`<option value=${n.name} ?selected=${n.name === node}>${n.name} (${n.gpu_count} × ${n.gpu_model ?? "GPU"})</option>`)}
        </select></div></div>
      <div class="grid2">
        <berth-monitoring-panel panel="node.gpu_utilization" heading="Utilisation per card" .scope=${scope} range="1h"></berth-monitoring-panel>
        <berth-monitoring-panel panel="node.gpu_memory_used" heading="Memory used per card" .scope=${scope} range="1h"></berth-monitoring-panel>
        <berth-monitoring-panel panel="node.gpu_temperature" heading="Temperature per card" .scope=${scope} range="1h"></berth-monitoring-panel>
      </div>
    </section>`;
  }

  /** The GPU models the cluster's nodes report, for the MIG form. */
  #gpuModels(): string[] {
    const nodes = this.#nodes.value?.data ?? [];
    return [...new Set(nodes.map((n) => n.gpu_model).filter((m): m is string => !!m))].sort();
  }

  override render() {
    return html`<p><a href="/admin/clusters">← Clusters</a></p>
      ${this.actionResult ? html`<p class="success" role="status" data-testid=${CLUSTERS_TEST_IDS.actionResult}>${this.actionResult}</p>` : nothing}
      ${this.actionError ? html`<berth-error-panel heading="That did not work" .error=${this.actionError}></berth-error-panel>` : nothing}
      ${renderTask(this.#cluster, { pendingLabel: "Loading the cluster…", complete: (c) => this.#facts(c) })}
      <section aria-labelledby="gpu-h"><h2 id="gpu-h">GPU activity</h2>
        <div class="grid2">
          <berth-monitoring-panel panel="cluster.gpu_utilization" heading="GPU utilisation by node" .scope=${{ cluster: this.clusterId }} range="1h"></berth-monitoring-panel>
          <berth-monitoring-panel panel="cluster.gpu_power" heading="GPU power by node" .scope=${{ cluster: this.clusterId }} range="1h"></berth-monitoring-panel>
        </div>
      </section>
      <section aria-labelledby="gateway-h" data-testid=${CLUSTERS_TEST_IDS.gatewayPanels}><h2 id="gateway-h">Session gateway</h2>
        <div class="grid2">
          <berth-monitoring-panel panel="cluster.gateway_latency" heading="Latency to sessions (p50, p99)" .scope=${{ cluster: this.clusterId }} range="1h"></berth-monitoring-panel>
          <berth-monitoring-panel panel="cluster.gateway_errors" heading="Errors to sessions" .scope=${{ cluster: this.clusterId }} range="1h"></berth-monitoring-panel>
          <berth-monitoring-panel panel="cluster.gateway_requests" heading="Requests by replica" .scope=${{ cluster: this.clusterId }} range="1h"></berth-monitoring-panel>
        </div>
      </section>
      <h2>Nodes</h2>
      ${renderTask(this.#nodes, {
        pendingLabel: "Loading nodes…",
        isEmpty: (r) => r.data.length === 0,
        empty: () =>
          html`<berth-empty-state heading="No node reported yet">The cluster's operator reports its nodes and GPUs once it runs with its token.</berth-empty-state>`,
        complete: (r) => html`${this.#nodesTable(r.data)}${this.#cards(r.data)}`,
      })}
      <berth-node-pools .clusterId=${this.clusterId}></berth-node-pools>
      <berth-mig-layouts .clusterId=${this.clusterId} .gpuModels=${this.#gpuModels()}></berth-mig-layouts>
      ${renderTask(this.#cluster, {
        complete: (c) => html`<section class="card" aria-labelledby="danger-h" style="margin-top:1.5rem">
          <h2 id="danger-h">Deregister</h2>
          <p class="hint">Refused while sessions or allocations live on the cluster. Type the cluster's name to confirm.</p>
          <div class="row">
            <label class="visually-hidden" for="del-name">Cluster name to confirm</label>
            <input id="del-name" style="max-width:16rem" placeholder=${c.name} .value=${this.deleteName} @input=${(e: Event) => (this.deleteName = (e.target as HTMLInputElement).value)} data-testid=${CLUSTERS_TEST_IDS.deregisterName} />
            <button type="button" class="danger" ?disabled=${this.deleteName !== c.name} @click=${() => this.#deregister(c)} data-testid=${CLUSTERS_TEST_IDS.deregister}>Deregister ${c.name}</button>
          </div>
        </section>`,
      })}`;
  }
}
