// The admission queue without a database: while a batch holds the door, at most MAX_WAITING creates of
// one organization wait in a process; the next is answered 503 at once, another organization still gets
// in line, and everyone who waited is answered when the batch ends. A failure shared by a batch is
// answered to all of it at once.
import { setImmediate as tick } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import type { NewSessionRow } from "../../db/operations/sessions/insertSession.ts";
import type { Deps } from "../../deps.ts";
import { Unavailable } from "../../errors.ts";
import { admitCreate, MAX_WAITING } from "./admission.ts";
import { AdmissionQueues } from "./admissionQueues.ts";
import type { QuotaRequest } from "./checkQuota.ts";
import type { SessionsRuntime } from "./runtime.ts";

/**
 * Deps whose database transactions and policy reads are the given functions; `batches` receives the size
 * of every batch admission decides (its metric), in order.
 */
function fakeDeps(
  batches: number[],
  transaction: () => Promise<never>,
  policies: () => Promise<unknown[]> = async () => [],
): Deps {
  return {
    db: { transaction },
    metrics: { sessionAdmissionBatch: { observe: (n: number) => batches.push(n) } },
    sessions: { catalog: { policies } } as unknown as SessionsRuntime,
    admission: new AdmissionQueues(),
  } as unknown as Deps;
}
const sum = (xs: number[]) => xs.reduce((a, x) => a + x, 0);
const createIn = (deps: Deps) => (organizationId: string) =>
  admitCreate(deps, { organizationId } as QuotaRequest, {} as NewSessionRow).then(
    () => "admitted",
    (e: { code?: string; details?: unknown }) => e,
  );

describe("the admission queue", () => {
  it("answers 503 unavailable beyond MAX_WAITING waiting creates of one organization, and answers all who waited", async () => {
    const { promise: held, reject: fail } = Promise.withResolvers<never>();
    const batches: number[] = [];
    const create = createIn(fakeDeps(batches, () => held));

    const first = create("org_a"); // holds the door
    const waiting = Array.from({ length: MAX_WAITING }, () => create("org_a"));
    expect(await create("org_a")).toMatchObject({
      code: "unavailable",
      details: { waiting: MAX_WAITING },
      headers: { "Retry-After": "1" },
    });
    const other = create("org_b"); // another organization has its own line
    await tick();
    expect(batches).toEqual([1, 1]); // org_a's first, and org_b's own

    // The database is gone: every one who waited is answered, none left hanging.
    fail(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }));
    const answers = await Promise.all([first, other, ...waiting]);
    expect(answers.every((a) => (a as { code?: string }).code === "ECONNREFUSED")).toBe(true);
    // The line is gone with the last batch: the next create starts a new one.
    expect(sum(batches)).toBe(2 + MAX_WAITING); // each decided once
    const again = create("org_a");
    await tick();
    expect(batches.at(-1)).toBe(1);
    expect(await again).toMatchObject({ code: "ECONNREFUSED" });
  });

  it("answers a failure of the catalog to the whole batch at once, not once per request", async () => {
    const { promise: first, reject: down } = Promise.withResolvers<never>();
    let reads = 0;
    const batches: number[] = [];
    const create = createIn(
      fakeDeps(
        batches,
        () => Promise.reject(new Error("no transaction expected")),
        () => (++reads === 1 ? first : Promise.reject(new Unavailable("the management cluster did not answer"))),
      ),
    );
    const answers = [create("org_c"), ...Array.from({ length: 10 }, () => create("org_c"))];
    down(new Unavailable("the management cluster did not answer"));
    expect((await Promise.all(answers)).every((a) => (a as { code?: string }).code === "unavailable")).toBe(true);
    expect(batches).toEqual([1, 10]); // the first batch, then the ten who waited as one: none again alone
  });
});
