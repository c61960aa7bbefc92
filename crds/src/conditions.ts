// Standard conditions (the shape of metav1.Condition). Phases say where an object is; conditions say why.
import { z } from "zod";
import { Timestamp } from "./fields.ts";

export const ConditionStatus = z.enum(["True", "False", "Unknown"]);
export type ConditionStatus = z.infer<typeof ConditionStatus>;

export const Condition = z.object({
  type: z
    .string()
    .max(316)
    .regex(
      /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/,
    ),
  status: ConditionStatus,
  observedGeneration: z.int().min(0).optional(),
  /** Moves only when `status` flips; see setCondition. */
  lastTransitionTime: Timestamp,
  /** A CamelCase constant, one of the kind's `…Reason` values. */
  reason: z
    .string()
    .min(1)
    .max(1024)
    .regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/),
  message: z.string().max(32768),
});
export type Condition = z.infer<typeof Condition>;

/** A list keyed by `type`, as the apiserver (and server-side apply) treats it. */
export const Conditions = z
  .array(Condition)
  .max(32)
  .refine((cs) => new Set(cs.map((c) => c.type)).size === cs.length, { message: "condition types must be unique" })
  .meta({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"] });

/** metav1.Time's wire form: RFC 3339, UTC, whole seconds. */
export function toTimestamp(at: Date): string {
  return `${at.toISOString().slice(0, 19)}Z`;
}

/**
 * Sets one condition. `lastTransitionTime` moves only when the status flips. When nothing changes the
 * same array comes back, so a reconciler can skip the write by comparing references.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  next: Omit<Condition, "lastTransitionTime">,
  now: Date,
): Condition[] {
  const list = conditions ?? [];
  const prev = list.find((c) => c.type === next.type);
  if (!prev) return [...list, { ...next, lastTransitionTime: toTimestamp(now) }];
  const lastTransitionTime = prev.status === next.status ? prev.lastTransitionTime : toTimestamp(now);
  const updated: Condition = { ...next, lastTransitionTime };
  const same =
    prev.status === updated.status &&
    prev.reason === updated.reason &&
    prev.message === updated.message &&
    prev.observedGeneration === updated.observedGeneration;
  if (same) return list as Condition[];
  return list.map((c) => (c === prev ? updated : c));
}

export function findCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

export function isConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === "True";
}
