// A session's interim status (kept off its resource) applies only while it follows the resource's status.
import { describe, expect, it } from "vitest";
import { type Session, SessionKind, statusBasis, withInterim } from "./kinds/session.ts";

function aSession(status: Session["status"]): Session {
  const s = SessionKind.build(
    { name: "ses-00000000000000000001", namespace: "org-acme" },
    { owner: "usr_1", organization: "org_acme", offering: "h100", preset: "gpu-small", image: "jupyterlab" },
  );
  s.status = status;
  return s;
}

const ready = (reason: string) => ({
  type: "Ready",
  status: "False" as const,
  reason,
  message: "waiting",
  lastTransitionTime: "2026-11-26T06:00:00Z",
});

describe("an interim status", () => {
  const paused = aSession({ phase: "Paused", conditions: [ready("PausedByUser")] });
  const interim = {
    status: { phase: "Resuming" as const, cluster: "clu_a", conditions: [ready("PodPending")] },
    basis: statusBasis(paused.status),
  };

  it("shows over the resource whose status it follows, the resource's reclaim clocks kept", () => {
    const reclaim = { period: "2026-11-26T06:00:00Z" };
    const s = withInterim({ ...paused, status: { ...paused.status, reclaim } }, interim);
    expect(s.status).toEqual({ ...interim.status, reclaim });
    expect(s.metadata).toBe(paused.metadata);
  });

  it("gives way once the resource's status moved on, and to none", () => {
    const running = aSession({ phase: "Running", conditions: [{ ...ready("PodRunning"), status: "True" }] });
    expect(withInterim(running, interim)).toBe(running);
    const failedSince = aSession({ phase: "Paused", conditions: [ready("InsufficientCredits")] });
    expect(withInterim(failedSince, interim)).toBe(failedSince);
    expect(withInterim(paused, null)).toBe(paused);
  });

  it("is checked against the phase and conditions whatever the order of their keys", () => {
    const [c] = paused.status?.conditions ?? [];
    const reordered = aSession({
      conditions: [Object.fromEntries(Object.entries(c ?? {}).reverse()) as typeof c & object],
      phase: "Paused",
    });
    expect(statusBasis(reordered.status)).toBe(interim.basis);
    expect(withInterim(reordered, interim).status?.phase).toBe("Resuming");
  });
});
