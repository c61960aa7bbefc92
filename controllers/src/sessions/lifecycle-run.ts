// The session plan when its intent is Running (sessions/lifecycle.ts): a waiting session is handed to the
// placement pass; a placed one follows its cluster (gone, silent, a node lost, a restart asked for) and
// then its operator's latest report.
import { SessionReason } from "@berth/crds";
import { at, connectPaths, type PlanDraft, type StatusReport } from "./lifecycle-draft.ts";

export function planRun(x: PlanDraft): void {
  const { o, s, d, phase, clusterName, plan } = x;
  if (phase === "Pending" || phase === "Queued" || phase === "Paused") {
    plan.needsPlacement = true;
    return;
  }
  if (phase === "Failed") return;
  if (phase === "Pausing" || phase === "Terminating") {
    // Intent went back to Running while the mirror was being deleted (not offered by the API, but a
    // kubectl edit can do it): let the deletion finish, then place again.
    if (x.mirrorGone) {
      d.phase("Pending").set("cluster", undefined).set("node", undefined).set("gpuDevices", undefined);
      plan.needsPlacement = true;
    } else plan.requeueAfterMs = x.timing.recheckMs;
    return;
  }

  // A holding phase: Starting, Resuming, Running, Restarting, Unknown.
  if (o.cluster?.registered === false || s.status?.cluster === undefined) {
    d.phase("Pending")
      .set("cluster", undefined)
      .set("node", undefined)
      .set("gpuDevices", undefined)
      .set("connect", undefined)
      .condition(
        "Scheduled",
        "False",
        SessionReason.ClusterGone,
        `cluster ${clusterName || "(none)"} is no longer registered`,
      )
      .condition("Ready", "False", SessionReason.ClusterGone, "placing the session again");
    x.event(
      "Warning",
      SessionReason.ClusterGone,
      `cluster ${clusterName} is no longer registered; placing the session again`,
    );
    plan.needsPlacement = true;
    return;
  }

  if (o.cluster?.reporting === false) {
    if (phase !== "Unknown") {
      d.phase("Unknown")
        .condition("Ready", "Unknown", SessionReason.ClusterNotReporting, `${clusterName} has not reported for a while`)
        .condition("Billable", "Unknown", SessionReason.ClusterNotReporting, "usage is charged up to the last sample");
      x.event(
        "Warning",
        SessionReason.ClusterNotReporting,
        `${clusterName} stopped reporting; the session's state is unknown`,
      );
    }
    return;
  }

  const lostNode = s.status?.node ?? s.status?.gpuAssignment?.node;
  if (o.nodeLost && lostNode) {
    placeAgain(
      x,
      SessionReason.NodeLost,
      `node ${lostNode} of ${clusterName} was lost or drained; placing the session again`,
      false,
    );
    return;
  }

  if (
    o.restartsRequested > o.restartsApplied &&
    (phase === "Running" || phase === "Unknown" || phase === "Restarting")
  ) {
    d.phase("Restarting")
      .set("connect", undefined)
      .condition("Ready", "False", SessionReason.RestartRequested, "replacing the pod");
    x.event("Normal", SessionReason.RestartRequested, "replacing the pod");
    plan.mirror = { op: "restart", restartCount: o.restartsRequested };
    return;
  }

  if (o.report) followReport(x, o.report);
  else {
    if (phase === "Unknown")
      d.phase("Starting").condition("Ready", "False", SessionReason.PodPending, `${clusterName} is reporting again`);
    if (o.mirror !== "present") plan.mirror = { op: "ensure" };
  }
}

/** A placed session that should run, as its operator's latest report has it. */
function followReport(x: PlanDraft, r: StatusReport): void {
  const { o, s, d, phase, clusterName, plan } = x;
  switch (r.phase) {
    case "Running": {
      if (phase !== "Running") {
        d.phase("Running")
          .set("startedAt", phase === "Unknown" && s.status?.startedAt ? s.status.startedAt : at(o.now))
          .set("connect", connectPaths(s.metadata.name as string))
          .condition("Dispatched", "True", SessionReason.MirrorCreated, `written to ${clusterName}`)
          .condition("Ready", "True", SessionReason.PodRunning, r.node ? `running on ${r.node}` : "running")
          .condition(
            "Billable",
            "True",
            SessionReason.Metering,
            s.spec.capacityClass === "borrowed"
              ? "usage is charged at the borrowed rate (the offering's borrowed rate multiplier)"
              : "usage is charged at the offering's rate",
          );
        // The one Event of a placement (Scheduled and Resumed are only conditions): where it runs.
        x.event(
          "Normal",
          phase === "Resuming" ? SessionReason.Resumed : SessionReason.Started,
          `${phase === "Resuming" ? "resumed" : "running"} on ${r.node ?? "a node"} of ${clusterName}`,
        );
      }
      d.set("node", r.node ?? undefined).set(
        "gpuDevices",
        r.gpuDevices && r.gpuDevices.length > 0 ? r.gpuDevices : undefined,
      );
      return;
    }
    case "Failed": {
      const reason =
        r.reason === "ImagePullFailed"
          ? SessionReason.ImagePullFailed
          : r.reason === SessionReason.ClaimNotBound
            ? SessionReason.ClaimNotBound
            : SessionReason.PodFailed;
      d.phase("Failed")
        .set("connect", undefined)
        .set("node", undefined)
        .set("gpuDevices", undefined)
        .condition("Ready", "False", reason, r.message || "the pod failed")
        .condition("Billable", "False", SessionReason.NotRunning, "the session failed");
      x.event("Warning", reason, `${r.message || "the pod failed"}; its GPU is released`);
      plan.mirror = { op: "delete", propagation: "Background" };
      return;
    }
    case "Terminated": {
      // The mirror vanished although the session should run (someone deleted it): write it again.
      d.phase(phase === "Running" ? "Starting" : phase).condition(
        "Ready",
        "False",
        SessionReason.MirrorLost,
        `the mirror on ${clusterName} disappeared; writing it again`,
      );
      if (phase === "Running")
        x.event("Warning", SessionReason.MirrorLost, `the mirror on ${clusterName} disappeared; writing it again`);
      plan.mirror = { op: "ensure" };
      return;
    }
    default: {
      // Starting, Restarting, Terminating as seen by the operator: the pod is not (yet) serving.
      const timing = x.timing;
      if (
        r.reason === SessionReason.Unschedulable &&
        o.unschedulableSince &&
        o.now.getTime() - o.unschedulableSince.getTime() >= timing.unschedulableMs
      ) {
        placeAgain(
          x,
          SessionReason.Unschedulable,
          `no node of ${clusterName} had room for ${Math.round(timing.unschedulableMs / 1000)} s; placing the session again`,
          true,
        );
        return;
      }
      const keep = phase === "Restarting" || phase === "Resuming" ? phase : "Starting";
      if (phase === "Running")
        x.event(
          "Warning",
          r.reason === "PodPending" ? "PodReplaced" : (r.reason ?? "PodPending"),
          r.message || "the pod is being replaced",
        );
      d.phase(keep)
        .set("connect", undefined)
        .condition(
          "Ready",
          "False",
          r.reason === SessionReason.Unschedulable || r.reason === SessionReason.WaitingForClaim
            ? r.reason
            : SessionReason.PodPending,
          r.reason === SessionReason.Unschedulable || r.reason === SessionReason.WaitingForClaim
            ? (r.message ?? "")
            : "waiting for the pod",
        );
      if (r.reason === SessionReason.Unschedulable) plan.requeueAfterMs = timing.unschedulableMs;
      return;
    }
  }
}

/** Off its cluster and back to placement (`avoid`: not on the same cluster for a while). */
function placeAgain(x: PlanDraft, reason: string, message: string, avoid: boolean): void {
  x.d
    .phase("Pending")
    .set("cluster", undefined)
    .set("node", undefined)
    .set("gpuDevices", undefined)
    .set("gpuAssignment", undefined)
    .set("connect", undefined)
    .condition("Scheduled", "False", reason, message)
    .condition("Ready", "False", reason, message)
    .condition("Billable", "False", SessionReason.NotRunning, "the session is being placed again");
  x.event("Warning", reason, message);
  x.plan.mirror = { op: "delete", propagation: "Background" };
  x.plan.needsPlacement = true;
  if (avoid) x.plan.avoidCluster = x.clusterName;
}
