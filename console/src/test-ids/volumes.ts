// Test ids of the Volumes page and a volume's snapshots.
export const VOLUMES_TEST_IDS = {
  table: "volumes-table",
  row: "volume-row",
  name: "volume-name",
  shared: "volume-shared",
  size: "volume-size",
  bound: "volume-bound",
  lock: "volume-lock",
  cost: "volume-cost",
  deletedTable: "deleted-volumes-table",
  deletedRow: "deleted-volume-row",
  storageRate: "storage-rate",
  notice: "volumes-notice",
  /** A volume's snapshots: the row's toggle, the panel, its table and rows. */
  snapshotsToggle: "volume-snapshots",
  snapshotsPanel: "snapshots-panel",
  snapshotsTable: "snapshots-table",
  noSnapshots: "no-snapshots",
  snapshotRow: "snapshot-row",
  snapshotName: "snapshot-name",
  snapshotState: "snapshot-state",
} as const;
