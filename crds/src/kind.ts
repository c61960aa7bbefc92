// What a kind is, once: its names, its scope, its zod schema and its printer columns. The generator
// turns a KindDefinition into a CRD; everyone else uses `schema` to parse and `build` to make objects.
import { z } from "zod";
import { Conditions } from "./conditions.ts";
import { ObjectMeta } from "./fields.ts";

export const GROUP = "berth.dev";
export const VERSION = "v1alpha1";
export const API_VERSION = `${GROUP}/${VERSION}` as const;
/** `kubectl get berth` lists every kind. */
export const CATEGORY = "berth";

export interface PrinterColumn {
  name: string;
  type: "string" | "integer" | "number" | "boolean" | "date";
  jsonPath: string;
  description?: string;
  /** 1: shown only with `-o wide`. */
  priority?: number;
}

const AGE: PrinterColumn = { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" };

/** Every status has these two, so that controllers handle all kinds alike. */
export function statusOf<S extends z.ZodRawShape>(shape: S) {
  return z.object({
    observedGeneration: z.int().min(0).optional(),
    conditions: Conditions.optional(),
    ...shape,
  });
}

export function defineKind<const K extends string, Spec extends z.ZodType, Status extends z.ZodType>(d: {
  kind: K;
  plural: string;
  shortNames: string[];
  namespaced: boolean;
  description: string;
  spec: Spec;
  status: Status;
  /** Without Age, which every kind gets last. */
  printerColumns: PrinterColumn[];
}) {
  const schema = z.object({
    apiVersion: z.literal(API_VERSION),
    kind: z.literal(d.kind),
    metadata: ObjectMeta,
    spec: d.spec,
    status: d.status.optional(),
  });
  return {
    kind: d.kind,
    plural: d.plural,
    singular: d.kind.toLowerCase(),
    listKind: `${d.kind}List`,
    shortNames: d.shortNames,
    namespaced: d.namespaced,
    description: d.description,
    group: GROUP,
    version: VERSION,
    apiVersion: API_VERSION,
    /** The CustomResourceDefinition's own name. */
    crdName: `${d.plural}.${GROUP}`,
    spec: d.spec,
    status: d.status,
    schema,
    printerColumns: [...d.printerColumns, AGE],
    /** A parsed object of this kind: defaults applied, throws when the spec is invalid. */
    build(metadata: ObjectMeta, spec: z.input<Spec>): z.output<typeof schema> {
      return schema.parse({ apiVersion: API_VERSION, kind: d.kind, metadata, spec });
    },
  };
}

export type KindDefinition = ReturnType<typeof defineKind<string, z.ZodType, z.ZodType>>;
