import { describe, expect, it } from "vitest";
import type { ClusterRow } from "../../db/operations/clusters/types.ts";
import { presentCluster } from "./presenter.ts";

const row = (r: Partial<ClusterRow>): ClusterRow => ({
  id: "clu_a",
  name: "a",
  session_domain: "a.example.com",
  registered_at: new Date("2026-11-26T09:00:00Z"),
  registered_by: null,
  deregistered_at: null,
  deregistered_by: null,
  operator_token_jti: null,
  operator_token_issued_at: null,
  operator_token_expires_at: null,
  inventory_observed_at: null,
  last_report_at: null,
  ...r,
});
const inventory = { nodes: 0, gpus: 0 };

describe("a cluster on the wire", () => {
  it("says since when it has not reported, as the worker's health pass marked it; never for a deregistered one", () => {
    const since = new Date("2026-11-26T10:00:00Z");
    expect(
      presentCluster({ row: row({ unreachable_since: since }), inventory }, { admin: false }).unreachable_since,
    ).toBe(since.toISOString());
    expect(presentCluster({ row: row({}), inventory }, { admin: false }).unreachable_since).toBeNull();
    const gone = row({ unreachable_since: since, deregistered_at: since });
    expect(presentCluster({ row: gone, inventory }, { admin: true }).unreachable_since).toBeNull();
  });
});
