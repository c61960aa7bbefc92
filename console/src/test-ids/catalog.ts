// Test ids of the catalog's admin pages: offerings by tier, presets, images, policies, build clusters.
export const CATALOG_TEST_IDS = {
  /** A tab (offerings, presets, images, policies, build-clusters). */
  tab: (tab: string) => `catalog-tab-${tab}`,
  new: "catalog-new",
  editor: "catalog-editor",
  /** An editor's field, by its key (name, hourly_credit_rate, max_session_hours, …). */
  field: (key: string) => `f-${key}`,
  fieldProblem: "field-problem",
  save: "catalog-save",
  /** A row's "Change", by its name. */
  edit: (name: string) => `catalog-edit-${name}`,
  /** The heading of a tier's offerings. */
  tier: (tier: string) => `tier-${tier}`,
  offeringRow: "offering-row",
  offeringShare: "offering-share",
  offeringToggle: (name: string) => `offering-toggle-${name}`,
  table: "catalog-table",
  row: "catalog-row",
  buildsNotAvailable: "builds-not-available",
  buildMark: "build-mark",
  buildMarkToggle: "build-mark-toggle",
} as const;
