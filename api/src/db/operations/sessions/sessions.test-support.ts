// Session rows for tests that need sessions in Postgres and nothing else (no resource, no cluster).
import type { Knex } from "knex";
import { insertSession } from "./insertSession.ts";

let made = 0;

/** `count` new queued H100 sessions of usr_1 in org_acme; their ids, in the order made (`ses_<tag>…`). */
export async function insertTestSessions(db: Knex, count: number, tag: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = `ses_${tag}${String(++made).padStart(18, "0")}`;
    await insertSession(db, {
      id,
      cr_name: id.replace("_", "-"),
      namespace: "org-acme",
      owner_id: "usr_1",
      organization_id: "org_acme",
      project_id: null,
      display_name: null,
      offering: "h100",
      preset: "gpu-small",
      image: "jupyterlab",
      gpu_model: "NVIDIA-H100-80GB-HBM3",
      gpu_count: 1,
      hourly_credit_rate: "4000000",
      cluster_pin: null,
      priority: 0,
      created_at: new Date(),
    });
    ids.push(id);
  }
  return ids;
}

/** A registered cluster `id` with one ready node of `gpus` free H100s: where the fleet's model check looks. */
export async function aGpuCluster(db: Knex, id: string, gpus: number): Promise<void> {
  const name = id.replace(/^clu_/, "");
  await db("clusters").insert({ id, name, session_domain: `${name}.test` });
  await db("cluster_nodes").insert({
    cluster_id: id,
    name: "n1",
    gpu_model: "NVIDIA-H100-80GB-HBM3",
    gpu_count: gpus,
    gpu_allocatable: gpus,
    gpu_in_use: 0,
    schedulable: true,
    ready: true,
    labels: "{}",
    observed_at: new Date(),
  });
}
