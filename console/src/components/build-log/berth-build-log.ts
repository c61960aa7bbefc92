// An image build's log, live: GET /api/v1/image-builds/{id}/logs as server-sent events, read with fetch
// (the bearer token), resumed with Last-Event-ID when the connection drops, until `event: end`. Fires
// `berth-build-ended` (detail: the end event's data) once the build has finished.
import { css, html, LitElement, nothing } from "lit";
import { SseParser } from "../../api/sse.ts";
import { followImageBuildLog } from "../../app/images.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { IMAGES_TEST_IDS } from "../../test-ids/images.ts";

const MAX_CHARS = 512 * 1024;

export class BerthBuildLog extends LitElement {
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
      }
    `,
  ];
  static override properties = {
    buildId: { type: String, attribute: "build-id" },
    text: { state: true },
    ended: { state: true },
  };
  declare buildId: string;
  declare text: string;
  declare ended: { state: string; failure_reason: string | null } | undefined;
  #abort: AbortController | undefined;
  #lastId: string | undefined;
  #following = "";

  constructor() {
    super();
    this.buildId = "";
    this.text = "";
    this.ended = undefined;
  }

  override updated(): void {
    if (this.buildId && this.buildId !== this.#following) {
      this.#following = this.buildId;
      this.#abort?.abort();
      this.text = "";
      this.ended = undefined;
      this.#lastId = undefined;
      void this.#follow(this.buildId);
    }
  }

  override disconnectedCallback(): void {
    this.#abort?.abort();
    this.#following = "";
    super.disconnectedCallback();
  }

  async #follow(id: string): Promise<void> {
    const abort = new AbortController();
    this.#abort = abort;
    while (!abort.signal.aborted && !this.ended) {
      try {
        const res = await followImageBuildLog(id, this.#lastId, abort.signal);
        const reader = (res.body as ReadableStream<Uint8Array>).getReader();
        const parser = new SseParser();
        const decoder = new TextDecoder();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          for (const m of parser.push(decoder.decode(value, { stream: true }))) {
            if (m.event === "log") {
              this.#lastId = m.id ?? this.#lastId;
              const next = this.text + (JSON.parse(m.data) as { text: string }).text;
              this.text = next.length > MAX_CHARS ? next.slice(-MAX_CHARS) : next;
            } else if (m.event === "end") {
              this.ended = JSON.parse(m.data) as { state: string; failure_reason: string | null };
              this.dispatchEvent(
                new CustomEvent("berth-build-ended", { detail: this.ended, bubbles: true, composed: true }),
              );
            }
          }
        }
      } catch {
        if (abort.signal.aborted) return;
      }
      if (!this.ended) await new Promise((r) => setTimeout(r, 2000));
    }
  }

  override render() {
    return html`<pre data-testid=${IMAGES_TEST_IDS.buildLog} aria-live="polite" aria-label="Build log">${this.text || "Waiting for the build to start…"}</pre>
      ${
        this.ended
          ? html`<p data-testid=${IMAGES_TEST_IDS.buildLogEnd} role="status">Build ${this.ended.state}${this.ended.failure_reason ? `: ${this.ended.failure_reason}` : ""}</p>`
          : nothing
      }`;
  }
}
