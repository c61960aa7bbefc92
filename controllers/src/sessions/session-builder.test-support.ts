// Builders for tests: aSession().onCluster("clu_a").running() reads like the state it makes.
import type { Session, SessionStatus } from "@berth/crds";
import { examples } from "@berth/crds/testing";

export class SessionBuilder {
  readonly s: Session;
  constructor(name = "ses-abc") {
    this.s = examples.Session();
    this.s.metadata = {
      name,
      namespace: "org-acme",
      generation: 1,
      creationTimestamp: "2026-11-22T06:00:00Z",
      uid: `uid-${name}`,
    };
    this.s.status = {};
  }
  desired(d: Session["spec"]["desiredState"]): this {
    this.s.spec.desiredState = d;
    return this;
  }
  status(st: Partial<SessionStatus>): this {
    this.s.status = { ...this.s.status, ...st };
    return this;
  }
  phase(p: NonNullable<SessionStatus["phase"]>): this {
    return this.status({ phase: p });
  }
  onCluster(c: string, node?: string): this {
    return this.status({ cluster: c, gpuModel: "NVIDIA-H100-80GB-HBM3", ...(node ? { node } : {}) });
  }
  starting(): this {
    return this.phase("Starting");
  }
  running(node = "gpu-a-1"): this {
    return this.status({ phase: "Running", node, startedAt: "2026-11-22T06:00:05Z" });
  }
  build(): Session {
    return structuredClone(this.s);
  }
}

export const aSession = (name?: string) => new SessionBuilder(name);
