// Kubernetes Events on Sessions, as `kubectl describe` shows them: posted in the background by a small
// pool (an Event is never worth holding a reconcile up for), best effort (a lost Event is logged at debug
// and dropped: the session's status and its history carry the truth).
import { type Session, sessionEventBody } from "@berth/crds";
import type { Logger } from "pino";
import type { KubeApi } from "../kube/client.ts";
import type { KubeEventSpec } from "./lifecycle.ts";

/** Events posted at once. */
const POSTERS = 16;

export class EventRecorder {
  readonly #kube: KubeApi;
  readonly #log: Logger;
  readonly #now: () => Date;
  readonly #component: string;
  readonly #queue: { session: Session; event: KubeEventSpec }[] = [];
  #posters = 0;
  #idle: (() => void)[] = [];
  /** Counts the Events handed over (posted or not). */
  readonly #counts: { events: number };

  constructor(o: { kube: KubeApi; log: Logger; now: () => Date; component: string; counts: { events: number } }) {
    this.#counts = o.counts;
    this.#kube = o.kube;
    this.#log = o.log;
    this.#now = o.now;
    this.#component = o.component;
  }

  record(session: Session, events: readonly KubeEventSpec[]): void {
    for (const event of events) {
      this.#queue.push({ session, event });
      this.#counts.events++;
    }
    while (this.#posters < POSTERS && this.#queue.length > 0) {
      this.#posters++;
      void this.#poster();
    }
  }

  async #poster(): Promise<void> {
    try {
      for (let job = this.#queue.shift(); job; job = this.#queue.shift()) {
        await this.#post(job.session, job.event).catch((err: unknown) =>
          this.#log.debug({ err: String(err) }, "a Kubernetes Event was not recorded"),
        );
      }
    } finally {
      this.#posters--;
      if (this.#posters === 0 && this.#queue.length === 0) for (const f of this.#idle.splice(0)) f();
    }
  }

  /** Resolves when every Event handed over so far has been posted (or given up). */
  idle(): Promise<void> {
    if (this.#posters === 0 && this.#queue.length === 0) return Promise.resolve();
    return new Promise((r) => this.#idle.push(r));
  }

  get busy(): boolean {
    return this.#posters > 0 || this.#queue.length > 0;
  }

  async #post(s: Session, e: KubeEventSpec): Promise<void> {
    const ns = s.metadata.namespace as string;
    const res = await this.#kube.request("POST", `/api/v1/namespaces/${ns}/events`, {
      body: sessionEventBody(s, e, this.#component, this.#now()),
    });
    if (res.status >= 300) throw new Error(`recording event ${e.reason}: ${res.status}`);
  }
}
