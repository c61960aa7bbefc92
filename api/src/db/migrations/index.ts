import type { Knex } from "knex";
import * as m20261122000001 from "./20261122000001_audit_and_idempotency.ts";
import * as m20261122000002 from "./20261122000002_identity.ts";
import * as m20261122000003 from "./20261122000003_clusters_inventory.ts";
import * as m20261122000004 from "./20261122000004_sessions.ts";
import * as m20261122000005 from "./20261122000005_connect_usage.ts";
import * as m20261122000006 from "./20261122000006_ledger.ts";
import * as m20261122000100 from "./20261122000100_idempotency_replay.ts";
import * as m20261122000106 from "./20261122000106_ledger_statement_balance.ts";
import * as m20261122000200 from "./20261122000200_session_events_commit_order.ts";
import * as m20261122000300 from "./20261122000300_users_list_order.ts";
import * as m20261123000100 from "./20261123000100_sessions_offering_gpu_count.ts";
import * as m20261123000200 from "./20261123000200_usage_samples_session_end.ts";
import * as m20261126000100 from "./20261126000100_audit_log.ts";
import * as m20261126000101 from "./20261126000101_notifications.ts";
import * as m20261126000102 from "./20261126000102_system_settings.ts";
import * as m20261126000200 from "./20261126000200_webhooks.ts";
import * as m20261126000300 from "./20261126000300_volumes.ts";
import * as m20261126000400 from "./20261126000400_gpu_sharing.ts";
import * as m20261126000500 from "./20261126000500_session_activity.ts";
import * as m20261126000600 from "./20261126000600_private_images.ts";
import * as m20261126000601 from "./20261126000601_image_builds.ts";
import * as m20261126000700 from "./20261126000700_quota_requests.ts";
import * as m20261126000900 from "./20261126000900_storage_billing.ts";
import * as m20261126001000 from "./20261126001000_fleet_webhooks.ts";
import * as m20261126001200 from "./20261126001200_image_webhooks.ts";
import * as m20261126001201 from "./20261126001201_webhook_body_bound.ts";
import * as m20261126001800 from "./20261126001800_volume_shares.ts";
import * as m20261126002000 from "./20261126002000_image_builds_by_operator.ts";
import * as m20261126002100 from "./20261126002100_usage_daily.ts";
import * as m20261126002200 from "./20261126002200_volume_shares_backfill.ts";
import * as m20261126002300 from "./20261126002300_interim_status.ts";
import * as m20261129001000 from "./20261129001000_fair_share.ts";
import * as m20261129002000 from "./20261129002000_user_imports.ts";
import * as m20261129003000 from "./20261129003000_node_pools.ts";
import * as m20261129130000 from "./20261129130000_mig.ts";
import * as m20261129140000 from "./20261129140000_volume_snapshots.ts";
import * as m20261129150000 from "./20261129150000_user_import_jobs.ts";
import * as m20261129160000 from "./20261129160000_node_pool_user_grants.ts";

export interface Migration {
  name: string;
  up: (knex: Knex) => Promise<void>;
}

// Forward-only, in order. Add a file named <timestamp>_<what>.ts and list it here.
export const migrations: Migration[] = [
  { name: "20261122000001_audit_and_idempotency", up: m20261122000001.up },
  { name: "20261122000002_identity", up: m20261122000002.up },
  { name: "20261122000100_idempotency_replay", up: m20261122000100.up },
  { name: "20261122000003_clusters_inventory", up: m20261122000003.up },
  { name: "20261122000005_connect_usage", up: m20261122000005.up },
  { name: "20261122000004_sessions", up: m20261122000004.up },
  { name: "20261122000006_ledger", up: m20261122000006.up },
  { name: "20261122000106_ledger_statement_balance", up: m20261122000106.up },
  { name: "20261122000200_session_events_commit_order", up: m20261122000200.up },
  { name: "20261122000300_users_list_order", up: m20261122000300.up },
  { name: "20261123000100_sessions_offering_gpu_count", up: m20261123000100.up },
  { name: "20261123000200_usage_samples_session_end", up: m20261123000200.up },
  { name: "20261126000200_webhooks", up: m20261126000200.up },
  { name: "20261126000300_volumes", up: m20261126000300.up },
  { name: "20261126000100_audit_log", up: m20261126000100.up },
  { name: "20261126000101_notifications", up: m20261126000101.up },
  { name: "20261126000102_system_settings", up: m20261126000102.up },
  { name: "20261126000400_gpu_sharing", up: m20261126000400.up },
  { name: "20261126000600_private_images", up: m20261126000600.up },
  { name: "20261126000700_quota_requests", up: m20261126000700.up },
  { name: "20261126000900_storage_billing", up: m20261126000900.up },
  { name: "20261126001000_fleet_webhooks", up: m20261126001000.up },
  { name: "20261126001800_volume_shares", up: m20261126001800.up },
  { name: "20261126000500_session_activity", up: m20261126000500.up },
  { name: "20261126000601_image_builds", up: m20261126000601.up },
  { name: "20261126001200_image_webhooks", up: m20261126001200.up },
  { name: "20261126001201_webhook_body_bound", up: m20261126001201.up },
  { name: "20261126002000_image_builds_by_operator", up: m20261126002000.up },
  { name: "20261126002100_usage_daily", up: m20261126002100.up },
  { name: "20261126002200_volume_shares_backfill", up: m20261126002200.up },
  { name: "20261126002300_interim_status", up: m20261126002300.up },
  { name: "20261129001000_fair_share", up: m20261129001000.up },
  { name: "20261129002000_user_imports", up: m20261129002000.up },
  { name: "20261129003000_node_pools", up: m20261129003000.up },
  { name: "20261129130000_mig", up: m20261129130000.up },
  { name: "20261129140000_volume_snapshots", up: m20261129140000.up },
  { name: "20261129150000_user_import_jobs", up: m20261129150000.up },
  { name: "20261129160000_node_pool_user_grants", up: m20261129160000.up },
];
