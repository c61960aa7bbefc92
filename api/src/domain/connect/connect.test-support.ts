// In-memory sessions and clusters for connect tests: builders that read like the sentences of a test.
import { NotFound } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import type { ConnectCluster, ConnectClusters, ConnectSession, ConnectSessions } from "./ports.ts";

export function aPrincipal(userId: string, over: Partial<Principal> = {}): Principal {
  return {
    userId,
    email: `${userId}@example.test`,
    isSuperAdmin: false,
    mustChangePassword: false,
    memberships: [],
    ...over,
  };
}

export class SessionBuilder {
  readonly s: ConnectSession;
  constructor(id: string) {
    this.s = {
      id,
      crName: `s-${id.replace(/^ses_/, "")}`,
      phase: "Running",
      ownerId: "usr_owner",
      organizationId: "org_1",
      clusterId: "clu_a",
      namespace: "berth-sessions",
      podName: `s-${id.replace(/^ses_/, "")}-0`,
    };
  }
  ownedBy(userId: string): this {
    this.s.ownerId = userId;
    return this;
  }
  onCluster(clusterId: string): this {
    this.s.clusterId = clusterId;
    return this;
  }
  named(cr: string): this {
    this.s.crName = cr;
    return this;
  }
  paused(): this {
    this.s.phase = "Paused";
    return this;
  }
  inPhase(phase: string): this {
    this.s.phase = phase;
    return this;
  }
  build(): ConnectSession {
    return { ...this.s };
  }
}

export const aSession = (id: string): SessionBuilder => new SessionBuilder(id);

/** Owner-only use, plus super admins: the same rule the sessions adapter applies. */
export class FakeSessions implements ConnectSessions {
  readonly map = new Map<string, ConnectSession>();
  constructor(sessions: Array<ConnectSession | SessionBuilder> = []) {
    for (const s of sessions) this.put(s instanceof SessionBuilder ? s.build() : s);
  }
  put(s: ConnectSession): void {
    this.map.set(s.id, s);
  }
  set(id: string, over: Partial<ConnectSession>): void {
    const s = this.map.get(id);
    if (!s) throw new Error(`no session ${id}`);
    this.map.set(id, { ...s, ...over });
  }
  async forUser(principal: Principal, sessionId: string): Promise<ConnectSession> {
    const s = this.map.get(sessionId);
    if (!s || (s.ownerId !== principal.userId && !principal.isSuperAdmin)) throw new NotFound("session", sessionId);
    return { ...s };
  }
  async byId(sessionId: string): Promise<ConnectSession | undefined> {
    const s = this.map.get(sessionId);
    return s ? { ...s } : undefined;
  }
  async mayUse(userId: string, session: ConnectSession): Promise<boolean> {
    return session.ownerId === userId;
  }
}

export class FakeClusters implements ConnectClusters {
  readonly map = new Map<string, ConnectCluster>();
  constructor(clusters: Record<string, string> = { clu_a: "a.sessions.test:9443", clu_b: "b.sessions.test" }) {
    for (const [id, sessionDomain] of Object.entries(clusters)) this.map.set(id, { id, sessionDomain });
  }
  async byId(clusterId: string): Promise<ConnectCluster | undefined> {
    return this.map.get(clusterId);
  }
}

export class TestClock {
  t: number;
  constructor(start = Date.parse("2026-11-22T10:00:00Z")) {
    this.t = start;
  }
  now(): Date {
    return new Date(this.t);
  }
  advance(ms: number): void {
    this.t += ms;
  }
}
