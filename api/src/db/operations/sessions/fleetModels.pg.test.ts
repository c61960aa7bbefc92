// The fleet's GPU models as every create checks them: callers that ask together share one query.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../db.test-support.ts";
import { fleetModels } from "./fleetModels.ts";
import { aGpuCluster } from "./sessions.test-support.ts";

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  await aGpuCluster(t.db, "clu_models_a", 8);
});
afterAll(async () => t?.drop());

describe("the fleet's GPU models", () => {
  it("answer callers that ask together with one query, and a later caller with a new one", async () => {
    const queries: string[] = [];
    const count = (q: { sql: string }) => {
      if (q.sql.startsWith("select distinct")) queries.push(q.sql);
    };
    t.db.on("query", count);
    try {
      const together = await Promise.all(Array.from({ length: 20 }, () => fleetModels(t.db)));
      expect(together.every((m) => m.join() === "NVIDIA-H100-80GB-HBM3")).toBe(true);
      expect(queries).toHaveLength(1);

      // A cluster's own question is another; a model registered since shows to the next caller.
      expect(await fleetModels(t.db, "clu_models_a")).toEqual(["NVIDIA-H100-80GB-HBM3"]);
      await t.db("cluster_nodes").insert({
        cluster_id: "clu_models_a",
        name: "n2",
        gpu_model: "NVIDIA-L4",
        gpu_count: 2,
        gpu_allocatable: 2,
        gpu_in_use: 0,
        schedulable: true,
        ready: true,
        labels: "{}",
        observed_at: new Date(),
      });
      expect(await fleetModels(t.db)).toEqual(["NVIDIA-H100-80GB-HBM3", "NVIDIA-L4"]);
      expect(queries).toHaveLength(3);
    } finally {
      t.db.off("query", count);
    }
  });
});
