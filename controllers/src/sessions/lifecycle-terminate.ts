// The session plan when its intent is Terminated (sessions/lifecycle.ts): the mirror is deleted, and the
// session is Terminated once it is gone, or once its silent cluster has been given up on.
import { SessionReason } from "@berth/crds";
import type { PlanDraft } from "./lifecycle-draft.ts";

export function planTerminate(x: PlanDraft): void {
  const { d, phase, clusterName } = x;
  if (!x.holds && phase !== "Terminating") {
    // A Failed session's mirror (if still reported) is deleted by the worker's level-based removal.
    x.becomeTerminated(
      SessionReason.TerminatedByUser,
      phase === "Failed" ? "terminated after it failed" : "terminated; it held no GPU",
    );
    return;
  }
  if (phase !== "Terminating") {
    d.phase("Terminating")
      .condition("Ready", "False", SessionReason.TerminatedByUser, `removing the session from ${clusterName}`)
      .condition("Billable", "False", SessionReason.NotRunning, "the session is terminating");
    // No Event: an intermediate step (Terminated follows); the Ready condition says it meanwhile.
    x.deleteMirror();
    return;
  }
  if (x.mirrorGone) {
    x.becomeTerminated(SessionReason.TerminatedByUser, `removed from ${clusterName}`);
    return;
  }
  if (x.silentTooLong()) {
    x.becomeTerminated(
      SessionReason.ClusterNotReporting,
      `${clusterName} stopped reporting; its mirror is deleted once it answers`,
    );
    return;
  }
  x.deleteMirror();
}
