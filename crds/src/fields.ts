// Field shapes shared by several kinds. Patterns here are also sent to the apiserver, which compiles
// them with Go's RE2: no lookarounds, no backreferences (structural.ts refuses them).
import { z } from "zod";

/** A Kubernetes object name (DNS-1123 subdomain): how one resource refers to another. */
export const ResourceName = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/);

/** A lowercase DNS name, e.g. a cluster's session domain. */
export const Hostname = ResourceName;

/** A lowercase DNS name with an optional port, e.g. `gpu-a.example.com` or `localhost:8443`. */
export const HostnamePort = z
  .string()
  .min(1)
  .max(259)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(:[0-9]{1,5})?$/);

/**
 * A Kubernetes label value: at most 63 of [A-Za-z0-9_.-], starting and ending alphanumeric. What a field
 * must be when nodes or pods carry it as a label (a GPU model is matched against nvidia.com/gpu.product).
 */
export const LabelValue = z
  .string()
  .min(1)
  .max(63)
  .regex(
    /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/,
    "a label value: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit",
  );

/**
 * A container image reference as registries and the kubelet parse it: an optional registry host (and
 * port), lowercase path components, then an optional tag and an optional digest. RE2-compatible.
 */
export const ImageReference = z
  .string()
  .min(1)
  .max(512)
  .regex(
    /^([A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*(:[0-9]{1,5})?\/)?[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*(\/[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@[A-Za-z][A-Za-z0-9]*([-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$/,
    "an image reference: [registry[:port]/]name[/name...][:tag][@digest], names in lowercase",
  );

/** An identifier owned by Postgres (user, organization, project). Opaque here, only bounded. */
export const Id = z.string().min(1).max(128);

export const DisplayName = z.string().min(1).max(128);

/**
 * A cluster's id as the REST API shows it. It is not a valid object name (underscore), so the Cluster
 * resource is named with `clusterResourceName(id)` and keeps the id in `spec.id`.
 */
export const ClusterId = z.string().regex(/^clu_[a-z0-9]{1,59}$/);

export function clusterResourceName(id: string): string {
  return id.replace("_", "-");
}

/** Money: a non-negative integer of minor units, as a string so that no float ever touches it. */
export const MinorUnits = z
  .string()
  .max(32)
  .regex(/^(0|[1-9][0-9]*)$/);

/** A balance may be overdrawn by usage that arrived after the last check, hence the sign. */
export const SignedMinorUnits = z
  .string()
  .max(33)
  .regex(/^(0|-?[1-9][0-9]*)$/);

/** 1 credit = 1,000,000 minor units. */
export const MINOR_UNITS_PER_CREDIT = 1_000_000n;

/** A Kubernetes resource quantity ("500m", "16Gi"), the same pattern controller-gen emits. */
export const Quantity = z
  .string()
  .regex(
    /^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$/,
  );

/** RFC 3339 in UTC, as metav1.Time serializes. */
export const Timestamp = z.iso.datetime();

/** Whole gigabytes: capacities are stated and compared in GB, never as floats. */
export const Gigabytes = z.int().min(0);

/**
 * Metadata is left to the apiserver (the CRD schema says only `type: object`); this is the part our
 * code reads and writes. Loose, so that fields we do not model (managedFields, …) survive a round trip.
 */
export const ObjectMeta = z.looseObject({
  name: z.string().optional(),
  generateName: z.string().optional(),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: z.int().optional(),
  creationTimestamp: z.string().optional(),
  deletionTimestamp: z.string().optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
  finalizers: z.array(z.string()).optional(),
  ownerReferences: z
    .array(z.looseObject({ apiVersion: z.string(), kind: z.string(), name: z.string(), uid: z.string() }))
    .optional(),
});
export type ObjectMeta = z.infer<typeof ObjectMeta>;

type Validation = { rule: string; message: string };

function addValidation<T extends z.ZodType>(schema: T, v: Validation): T {
  const meta = schema.meta() ?? {};
  const rules = (meta["x-kubernetes-validations"] as Validation[] | undefined) ?? [];
  return schema.meta({ ...meta, "x-kubernetes-validations": [...rules, v] }) as T;
}

/**
 * A cross-field rule that both sides enforce: zod runs `check` when parsing, the apiserver runs the CEL
 * `rule`. Keep the two saying the same thing; the apiserver test exercises every CEL rule.
 */
export function rule<T extends z.ZodType>(
  schema: T,
  cel: string,
  message: string,
  check: (value: z.output<T>) => boolean,
): T {
  return addValidation(schema.refine(check, { message }) as T, { rule: cel, message });
}

/** Refused by the apiserver on update. zod cannot see the old object, so parsing does not check this. */
export function immutable<T extends z.ZodType>(schema: T): T {
  return addValidation(schema, { rule: "self == oldSelf", message: "is immutable" });
}

/**
 * On an object: its optional `field`, once set, cannot be removed (the apiserver runs `immutable`'s rule
 * on a field only when both the old and the new object have it, so a removal would pass).
 */
export function keptOnceSet<T extends z.ZodType>(schema: T, field: string): T {
  return addValidation(schema, {
    rule: `!has(oldSelf.${field}) || has(self.${field})`,
    message: `${field} cannot be removed once set`,
  });
}
