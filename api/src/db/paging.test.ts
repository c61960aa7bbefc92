import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aPrincipal, fakeAuthenticator, startTestApi, type TestApi, testDeps } from "../http/http.test-support.ts";
import { createWidgetTable, testRoutes } from "../http/layerFixtures.test-support.ts";
import { createTestDatabase, type TestDatabase } from "./db.test-support.ts";
import { Page, pageOf } from "./paging.ts";

const alice = aPrincipal();

describe("paging", () => {
  let t: TestDatabase;
  let api: TestApi;
  beforeAll(async () => {
    t = await createTestDatabase();
    await createWidgetTable(t.db);
    await t
      .db("test_widgets")
      .insert(Array.from({ length: 45 }, (_, i) => ({ name: `w${i + 1}`, owner: alice.userId })));
    api = await startTestApi(testDeps({ db: t.db, authenticate: fakeAuthenticator({ alice }) }), testRoutes);
  });
  afterAll(async () => {
    await api?.stop();
    await t?.drop();
  });
  const list = async (qs: string) => {
    const res = await api.call(`/test/widgets${qs}`, { token: "alice" });
    return {
      status: res.status,
      body: (await res.json()) as {
        data: { name: string }[];
        pagination: unknown;
        error?: { code: string; details: { issues: { path: string[] }[] } };
      },
    };
  };

  it("defaults to page 1 of 20", async () => {
    const { status, body } = await list("");
    expect(status).toBe(200);
    expect(body.pagination).toEqual({ page: 1, size: 20, total: 45 });
    expect(body.data).toHaveLength(20);
    expect(body.data[0]?.name).toBe("w1");
  });

  it("returns the last partial page and an empty page past the end with the real total", async () => {
    const last = await list("?page=3&size=20");
    expect(last.body.data.map((w) => w.name)).toEqual(["w41", "w42", "w43", "w44", "w45"]);
    const past = await list("?page=9&size=20");
    expect(past.status).toBe(200);
    expect(past.body).toEqual({ data: [], pagination: { page: 9, size: 20, total: 45 } });
  });

  it("accepts size 1 and size 100", async () => {
    expect((await list("?size=1")).body.data).toHaveLength(1);
    expect((await list("?size=100")).body.data).toHaveLength(45);
  });

  for (const qs of [
    "?page=0",
    "?page=-1",
    "?page=1.5",
    "?page=abc",
    "?size=0",
    "?size=101",
    "?size=ten",
    "?page=1&page=2",
  ]) {
    it(`refuses ${qs} with 400 validation_failed naming the parameter`, async () => {
      const { status, body } = await list(qs);
      expect(status).toBe(400);
      expect(body.error?.code).toBe("validation_failed");
      expect(body.error?.details.issues[0]?.path[0]).toBe("query");
    });
  }

  it("pages an in-memory list the same way", () => {
    const items = Array.from({ length: 5 }, (_, i) => i);
    expect(pageOf(items, Page.parse({ page: "2", size: "2" }))).toEqual({
      data: [2, 3],
      pagination: { page: 2, size: 2, total: 5 },
    });
  });
});
