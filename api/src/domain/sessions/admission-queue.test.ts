// The admission queue's bound, without a database: while a batch holds the door, at most MAX_WAITING
// creates of one organization wait in a process; the next is answered 503 at once, another organization
// still gets in line, and everyone who waited is answered when the batch ends.
import { describe, expect, it } from "vitest";
import type { NewSessionRow } from "../../db/operations/sessions/insertSession.ts";
import type { Deps } from "../../deps.ts";
import { admitCreate, MAX_WAITING } from "./admission.ts";
import type { QuotaRequest } from "./checkQuota.ts";

describe("the admission queue", () => {
  it("answers 503 unavailable beyond MAX_WAITING waiting creates of one organization, and answers all who waited", async () => {
    let fail: (e: unknown) => void = () => {};
    const held = new Promise<never>((_, reject) => {
      fail = reject;
    });
    let transactions = 0;
    const deps = {
      db: {
        transaction: () => {
          transactions++;
          return held;
        },
      },
      metrics: { sessionAdmissionBatch: { observe: () => {} } },
    } as unknown as Deps;
    const create = (organizationId: string) =>
      admitCreate(deps, { organizationId } as QuotaRequest, {} as NewSessionRow).then(
        () => "admitted",
        (e: { code?: string; details?: unknown }) => e,
      );

    const first = create("org_a"); // holds the door
    const waiting = Array.from({ length: MAX_WAITING }, () => create("org_a"));
    expect(await create("org_a")).toMatchObject({
      code: "unavailable",
      details: { waiting: MAX_WAITING },
      headers: { "Retry-After": "1" },
    });
    const other = create("org_b"); // another organization has its own line
    expect(transactions).toBe(2);

    // The database is gone: every one who waited is answered, none left hanging.
    fail(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }));
    const answers = await Promise.all([first, other, ...waiting]);
    expect(answers.every((a) => (a as { code?: string }).code === "ECONNREFUSED")).toBe(true);
    // The line is gone with the last batch: the next create starts a new one.
    const again = create("org_a");
    expect(transactions).toBeGreaterThan(2);
    expect(await again).toMatchObject({ code: "ECONNREFUSED" });
  });
});
