// A session's logs: the last lines (tail), and follow, which streams new lines as the pod prints them
// (GET …/logs?follow=true answers text/plain until the pod ends or we leave).
import { css, html, LitElement, nothing } from "lit";
import { shared, tokens } from "../../styles/shared.ts";
import "../error-panel/index.ts";
import { followSessionLogs, loadSessionLogs } from "../../app/sessions.ts";
import { LOG_VIEWER_TEST_IDS } from "../../test-ids/log-viewer.ts";

const MAX_LINES = 2000;

export class BerthLogViewer extends LitElement {
  static override styles = [
    tokens,
    shared,
    css`
      pre {
        font-family: var(--berth-font-mono);
        font-size: 0.8rem;
        background: #0f1419;
        color: #e6e8eb;
        padding: 0.75rem;
        border-radius: var(--berth-radius);
        max-height: 24rem;
        overflow: auto;
        white-space: pre-wrap;
        word-break: break-all;
        margin: 0.5rem 0 0;
      }
      .check {
        display: inline-flex;
        gap: 0.35rem;
        align-items: center;
      }
      .check input {
        width: auto;
        min-height: 0;
      }
      .check label {
        margin: 0;
        font-weight: 400;
      }
    `,
  ];
  static override properties = {
    sessionId: { type: String },
    lines: { state: true },
    following: { state: true },
    loading: { state: true },
    error: { state: true },
    tail: { state: true },
  };
  declare sessionId: string;
  declare lines: string[];
  declare following: boolean;
  declare loading: boolean;
  declare error: unknown;
  declare tail: number;
  #abort: AbortController | undefined;

  constructor() {
    super();
    this.sessionId = "";
    this.lines = [];
    this.following = false;
    this.loading = false;
    this.error = undefined;
    this.tail = 200;
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#abort?.abort();
  }

  async load(): Promise<void> {
    this.#abort?.abort();
    this.following = false;
    this.loading = true;
    this.error = undefined;
    try {
      const r = await loadSessionLogs(this.sessionId, this.tail);
      this.lines = r.lines;
    } catch (e) {
      this.error = e;
    } finally {
      this.loading = false;
    }
  }

  async #follow(on: boolean): Promise<void> {
    this.#abort?.abort();
    this.following = on;
    if (!on) return;
    const abort = new AbortController();
    this.#abort = abort;
    this.error = undefined;
    this.lines = [];
    try {
      const res = await followSessionLogs(this.sessionId, this.tail, abort.signal);
      const reader = res.body?.pipeThrough(new TextDecoderStream()).getReader();
      let partial = "";
      while (reader) {
        const { value, done } = await reader.read();
        if (done) break;
        const parts = (partial + value).split("\n");
        partial = parts.pop() ?? "";
        this.lines = [...this.lines, ...parts].slice(-MAX_LINES);
        await this.updateComplete;
        const pre = this.renderRoot.querySelector("pre");
        if (pre) pre.scrollTop = pre.scrollHeight;
      }
    } catch (e) {
      if (!abort.signal.aborted) this.error = e;
    } finally {
      if (this.#abort === abort) this.following = false;
    }
  }

  override firstUpdated(): void {
    void this.load();
  }

  override render() {
    return html`<div class="row">
        <label for="tail" class="visually-hidden">Lines</label>
        <select id="tail" style="width:auto" @change=${(e: Event) => {
          this.tail = Number((e.target as HTMLSelectElement).value);
          void (this.following ? this.#follow(true) : this.load());
        }}>
          ${[100, 200, 1000].map((n) => html`<option value=${n} ?selected=${n === this.tail}>Last ${n} lines</option>`)}
        </select>
        <button type="button" @click=${() => this.load()} ?disabled=${this.loading} data-testid=${LOG_VIEWER_TEST_IDS.refresh}>Refresh</button>
        <span class="check"><input id="follow" type="checkbox" .checked=${this.following} @change=${(e: Event) => this.#follow((e.target as HTMLInputElement).checked)} data-testid=${LOG_VIEWER_TEST_IDS.follow} /><label for="follow">Follow</label></span>
        ${this.following ? html`<span class="muted" role="status">Following…</span>` : nothing}
      </div>
      ${this.error ? html`<berth-error-panel heading="Logs are not available" .error=${this.error}></berth-error-panel>` : nothing}
      <pre tabindex="0" aria-label="Session logs" aria-live="off" data-testid=${LOG_VIEWER_TEST_IDS.text}>${this.lines.length ? this.lines.join("\n") : this.loading ? "Loading…" : "No output yet."}</pre>`;
  }
}
