// The session plan when its intent is Paused (sessions/lifecycle.ts): the mirror is deleted, and the
// session is Paused (its GPUs free, its cluster forgotten) once it is gone or its cluster was given up on.
import { SessionReason } from "@berth/crds";
import type { PlanDraft } from "./lifecycle-draft.ts";

export function planPause(x: PlanDraft): void {
  const { d, phase, clusterName } = x;
  if (phase === "Paused") return;
  if (!x.holds && phase !== "Pausing") {
    x.becomePaused("paused before it was placed");
    return;
  }
  if (phase !== "Pausing") {
    d.phase("Pausing")
      .set("connect", undefined)
      .condition("Ready", "False", x.pauseReason, `deleting the pod on ${clusterName}`)
      .condition("Billable", "False", SessionReason.NotRunning, "the session is pausing");
    // No Event: an intermediate step (Paused follows); the Ready condition says it meanwhile.
    x.deleteMirror();
    return;
  }
  if (x.mirrorGone || x.silentTooLong()) {
    x.becomePaused(
      x.mirrorGone
        ? `the pod on ${clusterName} is gone and its GPU is free`
        : `${clusterName} stopped reporting; paused without confirmation`,
    );
    return;
  }
  x.deleteMirror();
}
