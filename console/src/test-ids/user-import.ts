// Test ids of the users page's CSV import (views/admin-users-view/berth-user-import.ts).
export const USER_IMPORT_TEST_IDS = {
  open: "user-import-open",
  file: "user-import-file",
  dryRun: "user-import-dry-run",
  run: "user-import-run",
  counts: "user-import-counts",
  row: "user-import-row",
  download: "user-import-download",
  passwords: "user-import-passwords",
  reveal: "user-import-reveal-passwords",
  progress: "user-import-progress",
} as const;
