import { z } from "zod";
import { DisplayName, Quantity, rule } from "../fields.ts";
import { defineKind, statusOf } from "../kind.ts";

export const PresetKindName = z.enum(["compute", "gpu"]);
export type PresetKindName = z.infer<typeof PresetKindName>;

export const ResourcePresetSpec = rule(
  z.object({
    displayName: DisplayName,
    kind: PresetKindName,
    /** Kubernetes quantities, as the pod's requests and limits take them. */
    cpu: Quantity,
    memory: Quantity,
    gpuCount: z.int().min(0).max(64).default(0),
  }),
  "self.kind == 'gpu' ? self.gpuCount > 0 : self.gpuCount == 0",
  "a gpu preset has gpuCount > 0 and a compute preset has none",
  (s) => (s.kind === "gpu" ? s.gpuCount > 0 : s.gpuCount === 0),
);
export type ResourcePresetSpec = z.infer<typeof ResourcePresetSpec>;

export const ResourcePresetStatus = statusOf({});
export type ResourcePresetStatus = z.infer<typeof ResourcePresetStatus>;

export const ResourcePresetKind = defineKind({
  kind: "ResourcePreset",
  plural: "resourcepresets",
  shortNames: ["preset"],
  namespaced: false,
  description: "CPU, memory and GPU count of a session's container.",
  spec: ResourcePresetSpec,
  status: ResourcePresetStatus,
  printerColumns: [
    { name: "Kind", type: "string", jsonPath: ".spec.kind" },
    { name: "CPU", type: "string", jsonPath: ".spec.cpu" },
    { name: "Memory", type: "string", jsonPath: ".spec.memory" },
    { name: "GPUs", type: "integer", jsonPath: ".spec.gpuCount" },
  ],
});
export const ResourcePreset = ResourcePresetKind.schema;
export type ResourcePreset = z.infer<typeof ResourcePreset>;
