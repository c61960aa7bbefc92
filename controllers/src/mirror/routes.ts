// Where each session's application answers on its GPU cluster: the pod's own address and its `http`
// port, read off the operator's pod watch. The session gateway follows this table (the operator's
// GET /routes, operator/src/routes.ts) instead of a Service per session, which cost the apiserver a
// Service, an Endpoints and an EndpointSlice write per session. A pod that restarts or moves shows up
// here as soon as its watch event arrives.
import { LABELS } from "@berth/crds";

export interface SessionRoute {
  host: string;
  port: number;
}

export interface RoutablePod {
  metadata: { name?: string; labels?: Record<string, string>; deletionTimestamp?: string };
  spec?: { containers?: { ports?: { name?: string; containerPort: number }[] }[] };
  status?: { phase?: string; podIP?: string; conditions?: { type: string; status: string }[] };
}

/**
 * The route to a session pod, or undefined while it should get no traffic: not Running and Ready, being
 * deleted, without an address yet, or without a port named `http`.
 */
export function routeOfPod(p: RoutablePod): SessionRoute | undefined {
  if (p.metadata.deletionTimestamp || p.status?.phase !== "Running" || !p.status.podIP) return undefined;
  if (p.status.conditions?.find((c) => c.type === "Ready")?.status !== "True") return undefined;
  for (const c of p.spec?.containers ?? [])
    for (const port of c.ports ?? [])
      if (port.name === "http") return { host: p.status.podIP, port: port.containerPort };
  return undefined;
}

/** The session a pod serves: its `berth.dev/session` label (the mirror's name), else its own name. */
export function sessionOfPod(p: RoutablePod): string | undefined {
  return p.metadata.labels?.[LABELS.session] ?? p.metadata.name;
}

export type RouteChange = { cr: string; route: SessionRoute | undefined };

/** The table, with listeners told of each change (the /routes streams). */
export class SessionRoutes {
  readonly #routes = new Map<string, SessionRoute>();
  readonly #listeners = new Set<(c: RouteChange) => void>();

  /** A pod's watch event: upserted (or deleted) pods change the table only when their route changes. */
  observe(pod: RoutablePod, deleted: boolean): void {
    const cr = sessionOfPod(pod);
    if (!cr) return;
    this.set(cr, deleted ? undefined : routeOfPod(pod));
  }

  set(cr: string, route: SessionRoute | undefined): void {
    const now = this.#routes.get(cr);
    if (route === undefined) {
      if (!now) return;
      this.#routes.delete(cr);
    } else {
      if (now && now.host === route.host && now.port === route.port) return;
      this.#routes.set(cr, route);
    }
    for (const l of this.#listeners) l({ cr, route });
  }

  get(cr: string): SessionRoute | undefined {
    return this.#routes.get(cr);
  }

  snapshot(): Record<string, SessionRoute> {
    return Object.fromEntries(this.#routes);
  }

  get size(): number {
    return this.#routes.size;
  }

  /** Every route removed (leadership lost: another operator's table is the truth now). */
  clear(): void {
    for (const cr of [...this.#routes.keys()]) this.set(cr, undefined);
  }

  /** Returns the unsubscribe. */
  subscribe(l: (c: RouteChange) => void): () => void {
    this.#listeners.add(l);
    return () => this.#listeners.delete(l);
  }
}
