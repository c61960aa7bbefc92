// The event kinds a webhook endpoint may subscribe to. Each is written to the outbox by a trigger in the
// same transaction as its change (migration 20261126000200_webhooks.ts says which table each comes from).
export const WEBHOOK_EVENT_TYPES = [
  "session.created",
  "session.queued",
  "session.running",
  "session.paused",
  "session.resumed",
  "session.terminated",
  "session.failed",
  "session.idle_warning",
  "session.runtime_warning",
  "session.reclaim_warning",
  "credits.running_low",
  "credits.request.created",
  "credits.request.decided",
  "credits.refill.applied",
  "quota.request.created",
  "quota.request.decided",
  "volume.created",
  "volume.resized",
  "volume.deleted",
  // Snapshots: a trigger on volume_snapshots (migration 20261129140000_volume_snapshots.ts).
  "volume.snapshot.ready",
  "volume.snapshot.failed",
  "volume.snapshot.deleted",
  "node.cordoned",
  "node.uncordoned",
  "node.drained",
  "node.deleted",
  "cluster.unreachable",
  "cluster.reachable",
  // Private images: triggers on image_builds and private_images (migration 20261126001200_image_webhooks.ts).
  "image.build.succeeded",
  "image.build.failed",
  "image.build.cancelled",
  "image.import.ready",
  "image.import.failed",
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** What a test ping sends; it goes to the one endpoint asked, whatever its filter. */
export const WEBHOOK_PING = "webhook.test";

export const WEBHOOK_EVENT_DESCRIPTIONS: Record<WebhookEventType, string> = {
  "session.created": "A session was accepted (phase Pending).",
  "session.queued": "A session waits for a GPU (phase Queued).",
  "session.running": "A session's pod runs (phase Running).",
  "session.paused":
    "A session was paused; data.reason says why (e.g. InsufficientCredits, MemberRemoved, Idle, MaxRuntime, CapacityReclaimed).",
  "session.resumed": "A paused session is starting again (phase Resuming).",
  "session.terminated": "A session ended (phase Terminated).",
  "session.failed": "A session's pod could not run (phase Failed); data.reason and data.message say why.",
  "session.idle_warning":
    "A session has been idle and will be paused (reason Idle) at data.deadline unless someone uses it or its owner keeps it running.",
  "session.runtime_warning":
    "A session reaches its maximum running time at data.deadline and will be paused (reason MaxRuntime).",
  "session.reclaim_warning":
    "A borrowed session will be paused (reason CapacityReclaimed) at data.deadline: a guaranteed session needs its GPUs. It resumes ahead of new work when room returns.",
  "credits.running_low": "A session's wallets will not cover it much longer; it will be paused when they run out.",
  "credits.request.created": "A member asked for credits.",
  "credits.request.decided": "A credit request was approved, partially approved or denied.",
  "credits.refill.applied": "A scheduled refill moved credits into a wallet.",
  "quota.request.created": "A member asked for higher resource-policy limits.",
  "quota.request.decided": "A quota-increase request was approved, partially approved or denied.",
  "volume.created": "A volume of the organization was made.",
  "volume.resized": "A volume's quota changed; data.previous_size_gb says from what.",
  "volume.deleted": "A volume of the organization was deleted.",
  "volume.snapshot.ready": "A snapshot of a volume is ready to restore.",
  "volume.snapshot.failed": "A snapshot of a volume failed; data.failure says why, as the cluster said it.",
  "volume.snapshot.deleted": "A snapshot of a volume was deleted on its cluster.",
  "node.cordoned":
    "An administrator cordoned a GPU node (no new sessions on it). Fleet-wide: every organization hears it.",
  "node.uncordoned": "A cordoned GPU node takes sessions again. Fleet-wide.",
  "node.drained":
    "An administrator drained a GPU node: its sessions were moved off (data.outcome partial: not all). Fleet-wide.",
  "node.deleted": "A GPU node was removed from its cluster. Fleet-wide.",
  "cluster.unreachable":
    "A GPU cluster stopped reporting; its sessions' state is unknown until it is back. Fleet-wide.",
  "cluster.reachable": "A cluster that was unreachable reports again. Fleet-wide.",
  "image.build.succeeded": "A member's image build pushed its image; data.digest is what sessions pull.",
  "image.build.failed": "A member's image build failed; data.reason says why.",
  "image.build.cancelled":
    "A member's image build was cancelled (by its owner, an administrator, or its image's deletion).",
  "image.import.ready":
    "A member's imported image was copied into Berth's registry; data.digest is what sessions pull.",
  "image.import.failed": "A member's image import failed; data.failure_code and data.reason say why.",
};
