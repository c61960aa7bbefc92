// Clusters: the fleet with each cluster's status and inventory, and registration. The control plane
// probes before accepting; the answer (accepted or refused) is shown check by check, and the operator
// token of an accepted cluster is shown once.
import { Task } from "@lit/task";
import { html, LitElement, nothing } from "lit";
import { ApiError } from "../../api/client.ts";
import type { Cluster, RegisterClusterRequest, RegisteredCluster } from "../../api/openapi.gen.ts";
import "../../components/check-list/index.ts";
import "../../components/error-panel/index.ts";
import "../../components/pending/index.ts";
import { loadClusters, registerCluster } from "../../app/clusters.ts";
import { renderTask } from "../../components/task-states.ts";
import { checksFromDetails, statusTone } from "../../data/clusters.ts";
import { formatRelative } from "../../data/format.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { CLUSTERS_TEST_IDS } from "../../test-ids/clusters.ts";

type CredentialKind = "token" | "kubeconfig";

export class BerthAdminClustersView extends LitElement {
  static override styles = [tokens, shared, page];
  static override properties = {
    showForm: { state: true },
    credentialKind: { state: true },
    busy: { state: true },
    result: { state: true },
    error: { state: true },
  };
  declare showForm: boolean;
  declare credentialKind: CredentialKind;
  declare busy: boolean;
  declare result: RegisteredCluster | undefined;
  declare error: unknown;

  #clusters = new Task(this, {
    task: async (_args, { signal }) => loadClusters(signal),
    args: () => [],
  });

  constructor() {
    super();
    this.showForm = false;
    this.credentialKind = "token";
    this.busy = false;
    this.result = undefined;
    this.error = undefined;
  }

  async #register(e: SubmitEvent): Promise<void> {
    e.preventDefault();
    // Keep the form: after an await, an event from inside a shadow root no longer has a target.
    const form = e.target as HTMLFormElement;
    const f = new FormData(form);
    const s = (k: string) => String(f.get(k) ?? "").trim();
    const credential: RegisterClusterRequest["credential"] =
      this.credentialKind === "kubeconfig"
        ? { kubeconfig: s("kubeconfig") }
        : { server: s("server"), token: s("token"), ...(s("ca_data") ? { ca_data: s("ca_data") } : {}) };
    this.busy = true;
    this.error = undefined;
    this.result = undefined;
    try {
      this.result = await registerCluster({ name: s("name"), session_domain: s("session_domain"), credential });
      form.reset();
      this.showForm = false;
      void this.#clusters.run();
    } catch (err) {
      this.error = err;
    } finally {
      this.busy = false;
    }
  }

  #registerForm() {
    const failedChecks = this.error instanceof ApiError ? checksFromDetails(this.error.details) : undefined;
    return html`<form class="card" @submit=${this.#register} data-testid=${CLUSTERS_TEST_IDS.registerClusterForm} aria-labelledby="reg-h">
      <h2 id="reg-h">Register a cluster</h2>
      <p class="hint">The control plane probes the cluster before accepting it: its API server must answer, the credential must allow what Berth does, and the GPU runtime class and device plugin must be installed. An unreachable address fails after about two minutes.</p>
      <div class="grid2">
        <div class="field"><label for="c-name">Name</label><input id="c-name" name="name" required maxlength="63" data-testid=${CLUSTERS_TEST_IDS.clusterName} /></div>
        <div class="field">
          <label for="c-domain">Session domain</label>
          <input id="c-domain" name="session_domain" required placeholder="gpu-a.example.com" aria-describedby="c-domain-hint" data-testid=${CLUSTERS_TEST_IDS.clusterSessionDomain} />
          <p class="hint" id="c-domain-hint">Hostname (optionally :port) of this cluster's session gateway.</p>
        </div>
      </div>
      <fieldset>
        <legend>Credential</legend>
        <div class="radio">
          <label><input type="radio" name="kind" value="token" ?checked=${this.credentialKind === "token"} @change=${() => (this.credentialKind = "token")} /> Server and token</label>
          <label><input type="radio" name="kind" value="kubeconfig" ?checked=${this.credentialKind === "kubeconfig"} @change=${() => (this.credentialKind = "kubeconfig")} /> Kubeconfig</label>
        </div>
        ${
          this.credentialKind === "token"
            ? html`<div class="field"><label for="c-server">API server address</label><input id="c-server" name="server" type="url" required placeholder="https://10.0.0.1:6443" data-testid=${CLUSTERS_TEST_IDS.clusterServer} /></div>
              <div class="field"><label for="c-token">Bearer token</label><textarea id="c-token" name="token" class="secret" required data-testid=${CLUSTERS_TEST_IDS.clusterToken}></textarea></div>
              <div class="field"><label for="c-ca">CA certificate (PEM, optional)</label><textarea id="c-ca" name="ca_data" class="secret" data-testid=${CLUSTERS_TEST_IDS.clusterCa}></textarea></div>`
            : html`<div class="field"><label for="c-kc">Kubeconfig (inline credentials only)</label><textarea id="c-kc" name="kubeconfig" class="secret" required data-testid=${CLUSTERS_TEST_IDS.clusterKubeconfig}></textarea></div>`
        }
      </fieldset>
      ${this.busy ? html`<berth-pending label="Probing the cluster… (up to two minutes when it does not answer)"></berth-pending>` : nothing}
      ${
        this.error
          ? html`<div data-testid=${CLUSTERS_TEST_IDS.registerRefused}><berth-error-panel heading="The cluster was not registered" .error=${this.error}></berth-error-panel>
            ${failedChecks ? html`<h3>Probe result</h3><berth-check-list .checks=${failedChecks}></berth-check-list>` : nothing}</div>`
          : nothing
      }
      <div class="row">
        <button class="primary" type="submit" ?disabled=${this.busy} data-testid=${CLUSTERS_TEST_IDS.registerSubmit}>Probe and register</button>
        <button type="button" @click=${() => (this.showForm = false)}>Close</button>
      </div>
    </form>`;
  }

  #registered(r: RegisteredCluster) {
    return html`<div class="success" role="status" data-testid=${CLUSTERS_TEST_IDS.registerAccepted}>
      <p><strong>${r.cluster.name}</strong> is registered as <code>${r.cluster.id}</code>.</p>
      ${r.cluster.checks ? html`<berth-check-list .checks=${r.cluster.checks}></berth-check-list>` : nothing}
      <div class="field">
        <label for="op-token">Operator token (shown once; expires ${formatRelative(r.operator_token.expires_at)})</label>
        <textarea id="op-token" class="secret" readonly .value=${r.operator_token.token} data-testid=${CLUSTERS_TEST_IDS.operatorToken}></textarea>
        <p class="hint">Store it as the operator's token file on the cluster. It cannot be shown again; rotate it from the cluster's page.</p>
      </div>
    </div>`;
  }

  #table(clusters: Cluster[]) {
    return html`<div class="table-wrap"><table data-testid=${CLUSTERS_TEST_IDS.clustersTable}>
      <caption class="visually-hidden">Registered clusters</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Session domain</th><th scope="col">Nodes</th><th scope="col">GPUs</th><th scope="col" class="hide-narrow">Last report</th></tr></thead>
      <tbody>
        ${clusters.map(
          (c) => html`<tr data-testid=${CLUSTERS_TEST_IDS.clusterRow} data-cluster-id=${c.id}>
            <td><a href="/admin/clusters/${encodeURIComponent(c.id)}">${c.name}</a><br /><code class="muted">${c.id}</code></td>
            <td><span class="badge tone-${statusTone(c.status)}">${c.status}</span></td>
            <td><code>${c.session_domain}</code></td>
            <td>${c.inventory.nodes}</td>
            <td>${c.inventory.gpus}</td>
            <td class="hide-narrow">${formatRelative(c.last_report_at)}${c.unreachable_since ? html` <span class="badge tone-bad" data-testid=${CLUSTERS_TEST_IDS.clusterUnreachable}>not reporting</span>` : ""}</td>
          </tr>`,
        )}
      </tbody>
    </table></div>`;
  }

  override render() {
    return html`<div class="page-head">
        <h1>Clusters</h1>
        <span class="spacer"></span>
        ${this.showForm ? nothing : html`<button class="primary" type="button" data-testid=${CLUSTERS_TEST_IDS.registerOpen} @click=${() => (this.showForm = true)}>Register a cluster</button>`}
      </div>
      ${this.result ? this.#registered(this.result) : nothing}
      ${this.showForm ? this.#registerForm() : nothing}
      <h2>Fleet</h2>
      ${renderTask(this.#clusters, {
        pendingLabel: "Loading clusters…",
        isEmpty: (r) => r.data.length === 0,
        empty: () =>
          html`<berth-empty-state heading="No cluster is registered">Register a GPU cluster to place sessions on it.</berth-empty-state>`,
        complete: (r) => this.#table(r.data),
      })}`;
  }
}
