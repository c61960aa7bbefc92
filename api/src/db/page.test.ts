import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "./db.test-support.ts";
import { connect, type Db } from "./knex.ts";
import { pageQuery, selectPage } from "./page.ts";

describe("selectPage: one page and the query's total", () => {
  let t: TestDatabase;
  /** SQL statements sent while `fn` runs. */
  const trips = async <T>(fn: () => Promise<T>): Promise<{ result: T; statements: string[] }> => {
    const statements: string[] = [];
    const listen = (q: { sql: string }) => statements.push(q.sql);
    t.db.on("query", listen);
    try {
      return { result: await fn(), statements };
    } finally {
      t.db.off("query", listen);
    }
  };
  const items = () => t.db("page_items").select("*").orderBy("seq");

  beforeAll(async () => {
    t = await createTestDatabase();
    await t.db.schema.createTable("page_items", (tb) => {
      tb.integer("seq").primary();
      tb.text("colour").notNullable();
    });
    // 45 rows: seq 1..45, colours red/green/blue in turn.
    await t
      .db("page_items")
      .insert(Array.from({ length: 45 }, (_, i) => ({ seq: i + 1, colour: ["red", "green", "blue"][i % 3] })));
  });
  afterAll(async () => {
    await t?.drop();
  });

  it("answers a full page and the total in one round trip", async () => {
    const { result, statements } = await trips(() =>
      selectPage<{ seq: number }>(t.db, items(), { limit: 20, offset: 0 }),
    );
    expect(result.total).toBe(45);
    expect(result.rows.map((r) => r.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(statements).toHaveLength(1);
  });

  it("answers the last, partial page with the total, in one round trip", async () => {
    const { result, statements } = await trips(() =>
      selectPage<{ seq: number }>(t.db, items(), { limit: 20, offset: 40 }),
    );
    expect(result).toEqual({
      total: 45,
      rows: [41, 42, 43, 44, 45].map((seq) => ({ seq, colour: ["red", "green", "blue"][(seq - 1) % 3] })),
    });
    expect(statements).toHaveLength(1);
  });

  it("answers a page past the end as no rows with the real total (a second trip counts)", async () => {
    const { result, statements } = await trips(() => selectPage(t.db, items(), { limit: 20, offset: 60 }));
    expect(result).toEqual({ rows: [], total: 45 });
    expect(statements).toHaveLength(2);
  });

  it("answers an empty list as no rows and total 0, on the first page and past it", async () => {
    const none = () => items().where("colour", "purple");
    const first = await trips(() => selectPage(t.db, none(), { limit: 20, offset: 0 }));
    expect(first.result).toEqual({ rows: [], total: 0 });
    expect(first.statements).toHaveLength(1);
    expect((await selectPage(t.db, none(), { limit: 20, offset: 40 })).total).toBe(0);
  });

  it("counts what a filter leaves, not the table", async () => {
    const red = await selectPage<{ seq: number }>(t.db, items().where("colour", "red"), { limit: 10, offset: 10 });
    expect(red.total).toBe(15);
    expect(red.rows.map((r) => r.seq)).toEqual([31, 34, 37, 40, 43]);
  });

  it("never hands back its own total column", async () => {
    const { rows } = await selectPage<Record<string, unknown>>(t.db, items(), { limit: 2, offset: 0 });
    expect(Object.keys(rows[0] ?? {}).sort()).toEqual(["colour", "seq"]);
  });

  it("keeps every column of a query with no select list", async () => {
    const { rows, total } = await selectPage<Record<string, unknown>>(t.db, t.db("page_items").orderBy("seq"), {
      limit: 1,
      offset: 0,
    });
    expect(rows).toEqual([{ seq: 1, colour: "red" }]);
    expect(total).toBe(45);
  });

  it("counts groups of a GROUP BY query", async () => {
    const grouped = t
      .db("page_items")
      .select("colour", t.db.raw("count(*)::int AS n"))
      .groupBy("colour")
      .orderBy("colour");
    const { result, statements } = await trips(() => selectPage(t.db, grouped, { limit: 2, offset: 0 }));
    expect(result).toEqual({
      total: 3,
      rows: [
        { colour: "blue", n: 15 },
        { colour: "green", n: 15 },
      ],
    });
    expect(statements).toHaveLength(1);
  });

  it("counts distinct rows of a DISTINCT query, in one round trip", async () => {
    const distinct = t.db("page_items").distinct("colour").orderBy("colour");
    const { result, statements } = await trips(() => selectPage(t.db, distinct, { limit: 2, offset: 2 }));
    expect(result).toEqual({ total: 3, rows: [{ colour: "red" }] });
    expect(statements).toHaveLength(1);
    expect(await selectPage(t.db, distinct, { limit: 2, offset: 4 })).toEqual({ total: 3, rows: [] });
  });

  it("counts a query whose filter refers to its own table from a subquery (EXISTS on another table)", async () => {
    await t.db.schema.createTable("page_marks", (tb) => tb.integer("seq"));
    try {
      await t.db("page_marks").insert([{ seq: 2 }, { seq: 3 }, { seq: 5 }, { seq: 7 }]);
      const marked = items().whereExists(t.db("page_marks").whereRaw("page_marks.seq = page_items.seq"));
      const { result, statements } = await trips(() =>
        selectPage<{ seq: number }>(t.db, marked, { limit: 2, offset: 0 }),
      );
      expect(result.total).toBe(4);
      expect(result.rows.map((r) => r.seq)).toEqual([2, 3]);
      expect(statements).toHaveLength(1);
    } finally {
      await t.db.schema.dropTable("page_marks");
    }
  });

  it("counts without the select list when it is plain columns, and with it when it can change the rows", async () => {
    const plain = t.db("page_items").select("seq", "page_items.colour").where("colour", "red").orderBy("seq");
    const { result, statements } = await trips(() => selectPage<{ seq: number }>(t.db, plain, { limit: 2, offset: 0 }));
    expect(result).toEqual({
      total: 15,
      rows: [
        { seq: 1, colour: "red" },
        { seq: 4, colour: "red" },
      ],
    });
    expect(statements[0]).toMatch(/\(SELECT count\(\*\) FROM \(select 1 from "page_items" where/);
    // Two rows per item from a set-returning function: the count must see them.
    const doubled = t
      .db("page_items")
      .select("seq", t.db.raw("generate_series(1, 2) as copy"))
      .where("seq", "<=", 3)
      .orderBy(["seq", "copy"]);
    expect((await selectPage(t.db, doubled, { limit: 2, offset: 0 })).total).toBe(6);
    // An aggregate over plain column names is one row, and a raw GROUP BY may name a select-list position.
    expect((await selectPage(t.db, t.db("page_items").max("seq"), { limit: 2, offset: 0 })).total).toBe(1);
    const byName = t.db("page_items").select("colour").groupBy("colour").orderBy("colour");
    const byPosition = t.db("page_items").select("colour").groupByRaw("1").orderBy("colour");
    expect((await selectPage(t.db, byName, { limit: 2, offset: 0 })).total).toBe(3);
    expect((await selectPage(t.db, byPosition, { limit: 2, offset: 0 })).total).toBe(3);
  });

  it("counts a UNION apart (the total column would belong to one branch)", async () => {
    const union = t
      .db("page_items")
      .select("seq")
      .where("seq", "<", 3)
      .union((u) => u.select("seq").from("page_items").where("seq", ">", 43))
      .orderBy("seq");
    const { result, statements } = await trips(() => selectPage<{ seq: number }>(t.db, union, { limit: 3, offset: 0 }));
    expect(result).toEqual({ total: 4, rows: [{ seq: 1 }, { seq: 2 }, { seq: 44 }] });
    expect(statements).toHaveLength(2);
  });

  describe("on a pool of one connection", () => {
    let one: Db;
    beforeAll(() => {
      one = connect(t.url, { poolMax: 1 });
    });
    afterAll(async () => {
      await one?.destroy();
    });
    const pageOf = (offset: number) =>
      selectPage<{ seq: number }>(one, one("page_items").select("seq").orderBy("seq"), { limit: 5, offset });

    it("prepares a list's statement once and runs it again by name", async () => {
      const firsts = [];
      // Past the first page (knex leaves out OFFSET 0, a statement of its own).
      for (let i = 1; i <= 6; i++) firsts.push((await pageOf(i * 5)).rows[0]?.seq);
      expect(firsts).toEqual([6, 11, 16, 21, 26, 31]);
      const prepared = (
        await one.raw(
          "select generic_plans + custom_plans as runs from pg_prepared_statements where name like 'page\\_%' and statement like '%\"page_items\"%'",
        )
      ).rows as { runs: string }[];
      expect(prepared.map((p) => Number(p.runs))).toEqual([6]);
    });

    it("prepares a statement afresh when its table's columns changed under it", async () => {
      const all = () =>
        selectPage<{ seq: number; note?: string }>(one, one("page_changing").orderBy("seq"), { limit: 5, offset: 0 });
      await one.schema.createTable("page_changing", (tb) => tb.integer("seq").primary());
      await one("page_changing").insert([{ seq: 1 }, { seq: 2 }]);
      expect((await all()).rows).toEqual([{ seq: 1 }, { seq: 2 }]);
      await one.schema.alterTable("page_changing", (tb) => tb.text("note").defaultTo("new"));
      expect(await all()).toEqual({
        total: 2,
        rows: [
          { seq: 1, note: "new" },
          { seq: 2, note: "new" },
        ],
      });
    });
  });

  it("runs a query given .transacting(trx) inside that transaction", async () => {
    const trx = await t.db.transaction();
    try {
      await trx("page_items").insert({ seq: 47, colour: "blue" });
      const q = t.db("page_items").select("seq").orderBy("seq", "desc").transacting(trx);
      expect(await selectPage(t.db, q, { limit: 1, offset: 0 })).toEqual({ total: 46, rows: [{ seq: 47 }] });
    } finally {
      await trx.rollback();
    }
  });

  it("works inside a transaction", async () => {
    const trx = await t.db.transaction();
    try {
      await trx("page_items").insert({ seq: 46, colour: "red" });
      const page = await selectPage<{ seq: number }>(trx, trx("page_items").select("seq").orderBy("seq", "desc"), {
        limit: 1,
        offset: 0,
      });
      expect(page).toEqual({ total: 46, rows: [{ seq: 46 }] });
    } finally {
      await trx.rollback();
    }
  });
});

describe("pageQuery: a list's page statement compiled once per shape of its parameters", () => {
  let t: TestDatabase;
  type Item = { seq: number; colour: string };
  interface ItemParams {
    [key: string]: string | number | readonly string[] | undefined;
    colour?: string;
    colours?: readonly string[];
    minSeq?: number;
  }
  let builds = 0;
  const items = pageQuery<Item, ItemParams>("test items", (db, p) => {
    builds += 1;
    const q = db("page_q_items").select("seq", "colour").orderBy("seq");
    if (p.colour) q.where("colour", p.colour);
    if (p.colours) q.whereIn("colour", p.colours);
    if (p.minSeq) q.where("seq", ">=", p.minSeq);
    return q;
  });
  /** The same list through selectPage, compiled on every call: the reference. */
  const reference = (p: ItemParams, w: { limit: number; offset: number }) => {
    const q = t.db("page_q_items").select("seq", "colour").orderBy("seq");
    if (p.colour) q.where("colour", p.colour);
    if (p.colours) q.whereIn("colour", p.colours);
    if (p.minSeq) q.where("seq", ">=", p.minSeq);
    return selectPage<Item>(t.db, q, w);
  };

  beforeAll(async () => {
    t = await createTestDatabase();
    await t.db.schema.createTable("page_q_items", (tb) => {
      tb.integer("seq").primary();
      tb.text("colour").notNullable();
    });
    await t
      .db("page_q_items")
      .insert(Array.from({ length: 30 }, (_, i) => ({ seq: i + 1, colour: ["red", "green", "blue"][i % 3] })));
  });
  afterAll(async () => {
    await t?.drop();
  });

  it("answers what selectPage answers, for every shape and window", async () => {
    const cases: ItemParams[] = [
      {},
      { colour: "red" },
      { colour: "green" },
      { colour: "" },
      { colours: [] },
      { colours: ["blue"] },
      { colours: ["red", "blue"] },
      { colours: ["green", "red"], minSeq: 10 },
      { colour: "blue", minSeq: 0 },
      { minSeq: 25 },
    ];
    for (const p of cases) {
      for (const w of [
        { limit: 4, offset: 0 },
        { limit: 4, offset: 8 },
        { limit: 50, offset: 0 },
        { limit: 4, offset: 100 },
      ]) {
        expect(await items(t.db, p, w), JSON.stringify({ p, w })).toEqual(await reference(p, w));
      }
    }
  });

  it("builds the query only for a new shape (with stand-ins, then once to check), not per request", async () => {
    const before = builds;
    await items(t.db, { colour: "red", minSeq: 3 }, { limit: 2, offset: 0 });
    const afterFirst = builds;
    const answers = [];
    for (const colour of ["red", "green", "blue"])
      answers.push(await items(t.db, { colour, minSeq: 4 }, { limit: 2, offset: 2 }));
    expect(afterFirst - before).toBe(2);
    expect(builds).toBe(afterFirst);
    expect(answers.map((a) => a.rows.map((r) => r.seq))).toEqual([
      [10, 13],
      [11, 14],
      [12, 15],
    ]);
    // A new shape (another IN list length) is built again.
    await items(t.db, { colours: ["red", "green", "blue"] }, { limit: 1, offset: 0 });
    expect(builds).toBe(afterFirst + 2);
  });

  it("runs inside a transaction as selectPage does, on the transaction's connection", async () => {
    const trx = await t.db.transaction();
    try {
      await trx("page_q_items").insert({ seq: 31, colour: "red" });
      expect(await items(trx, { colour: "red", minSeq: 30 }, { limit: 5, offset: 0 })).toEqual({
        total: 1,
        rows: [{ seq: 31, colour: "red" }],
      });
    } finally {
      await trx.rollback();
    }
  });

  it("refuses a builder that computes a value from a parameter, uses one as SQL, or makes a Date", async () => {
    const computed = pageQuery<Item, { colour: string }>("computed", (db, p) =>
      db("page_q_items")
        .whereRaw("colour like ?", [`${p.colour}%`])
        .orderBy("seq"),
    );
    await expect(computed(t.db, { colour: "re" }, { limit: 1, offset: 0 })).rejects.toThrow(
      /computed from a parameter/,
    );
    const identifier = pageQuery<Item, { column: string }>("identifier", (db, p) =>
      db("page_q_items").orderBy(p.column),
    );
    await expect(identifier(t.db, { column: "seq" }, { limit: 1, offset: 0 })).rejects.toThrow(/into the SQL text/);
    const dated = pageQuery<Item, { colour: string }>("dated", (db, p) =>
      db("page_q_items")
        .where("colour", p.colour)
        .whereRaw("? > now() - interval '1 day'", [new Date()])
        .orderBy("seq"),
    );
    await expect(dated(t.db, { colour: "red" }, { limit: 1, offset: 0 })).rejects.toThrow(/Date of its own/);
  });

  it("refuses a builder that reads a parameter as more than a value (the query from real values differs)", async () => {
    const direction = pageQuery<Item, { dir: string }>("direction", (db, p) =>
      db("page_q_items").orderBy("seq", p.dir as "asc" | "desc"),
    );
    await expect(direction(t.db, { dir: "desc" }, { limit: 1, offset: 0 })).rejects.toThrow(/more than a value/);
    const compared = pageQuery<Item, { n: number }>("compared", (db, p) => {
      const q = db("page_q_items").orderBy("seq");
      if (typeof p.n === "number" && p.n > 5) q.where("seq", ">", p.n);
      return q;
    });
    await expect(compared(t.db, { n: 10 }, { limit: 1, offset: 0 })).rejects.toThrow(/more than a value/);
  });

  it("takes null, booleans and an array bound whole (= ANY), each in its own shape", async () => {
    const flagged = pageQuery<Item, { colours: readonly string[]; odd: boolean; below: number | null }>(
      "flagged",
      (db, p) => {
        const q = db("page_q_items")
          .select("seq", "colour")
          .whereRaw("colour = ANY(?::text[])", [p.colours as string[]]);
        if (p.odd) q.whereRaw("seq % 2 = 1");
        if (p.below !== null) q.where("seq", "<", p.below);
        return q.orderBy("seq");
      },
    );
    const seqs = async (p: { colours: readonly string[]; odd: boolean; below: number | null }) =>
      (await flagged(t.db, p, { limit: 50, offset: 0 })).rows.map((r) => r.seq);
    expect(await seqs({ colours: ["red"], odd: true, below: null })).toEqual([1, 7, 13, 19, 25]);
    expect(await seqs({ colours: ["green"], odd: false, below: 12 })).toEqual([2, 5, 8, 11]);
    expect(await seqs({ colours: ["blue"], odd: true, below: 16 })).toEqual([3, 9, 15]);
    expect(await seqs({ colours: ["red"], odd: false, below: null })).toEqual([1, 4, 7, 10, 13, 16, 19, 22, 25, 28]);
  });

  it("takes a constant array the builder makes on every call", async () => {
    const warm = pageQuery<Item, { minSeq: number }>("warm", (db, p) =>
      db("page_q_items")
        .select("seq", "colour")
        .whereRaw("colour = ANY(?::text[])", [["red", "green"]])
        .where("seq", ">=", p.minSeq)
        .orderBy("seq"),
    );
    expect((await warm(t.db, { minSeq: 25 }, { limit: 50, offset: 0 })).rows.map((r) => r.seq)).toEqual([
      25, 26, 28, 29,
    ]);
  });

  it("answers rightly past the shapes it keeps (each new length of an IN list is a shape)", async () => {
    const many = pageQuery<Item, { seqs: readonly number[] }>("many", (db, p) =>
      db("page_q_items").select("seq", "colour").whereIn("seq", p.seqs).orderBy("seq"),
    );
    for (let n = 1; n <= 70; n++) {
      const seqs = Array.from({ length: n }, (_, i) => (i % 30) + 1);
      const page = await many(t.db, { seqs }, { limit: 1, offset: 0 });
      expect(page.total).toBe(Math.min(n, 30));
    }
    expect((await many(t.db, { seqs: [4, 5] }, { limit: 5, offset: 0 })).rows.map((r) => r.seq)).toEqual([4, 5]);
  });

  it("counts a top-level UNION apart, as selectPage does", async () => {
    const union = pageQuery<{ seq: number }, { low: number }>("union", (db, p) =>
      db("page_q_items")
        .select("seq")
        .where("seq", "<", p.low)
        .union((u) => u.select("seq").from("page_q_items").where("seq", ">", 28))
        .orderBy("seq"),
    );
    expect(await union(t.db, { low: 3 }, { limit: 3, offset: 0 })).toEqual({
      total: 4,
      rows: [{ seq: 1 }, { seq: 2 }, { seq: 29 }],
    });
    // Once more, with the shape known to count apart.
    expect(await union(t.db, { low: 4 }, { limit: 3, offset: 0 })).toEqual({
      total: 5,
      rows: [{ seq: 1 }, { seq: 2 }, { seq: 3 }],
    });
  });
});
