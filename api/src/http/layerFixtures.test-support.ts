// A tiny route set that exercises the layer in tests. Never part of the contract.
import { z } from "zod";
import type { Db } from "../db/knex.ts";
import { Page, Paged, paginate } from "../db/paging.ts";
import { Conflict } from "../errors.ts";
import { defineRoute, type RouteDef } from "./route.ts";

export const Widget = z.object({ id: z.string(), name: z.string(), owner: z.string() });
export const CreateWidget = z.object({ name: z.string().min(1).max(40), color: z.enum(["red", "blue"]).optional() });

export async function createWidgetTable(db: Db): Promise<void> {
  await db.schema.createTable("test_widgets", (t) => {
    t.bigIncrements("seq");
    t.text("name").notNullable();
    t.text("owner").notNullable();
    t.text("secret").notNullable().defaultTo("do-not-leak");
  });
}

const present = (r: { seq: string | number; name: string; owner: string }) => ({
  id: `wid_${r.seq}`,
  name: r.name,
  owner: r.owner,
});

/** Test knobs: how long a create takes, a gate a test can hold shut, and a failure. */
export const knobs: { createDelayMs: number; gate: Promise<void> | undefined; fail500Once: boolean } = {
  createDelayMs: 0,
  gate: undefined,
  fail500Once: false,
};

export const testRoutes: RouteDef[] = [
  defineRoute({
    method: "post",
    path: "/test/widgets",
    operationId: "testCreateWidget",
    tags: ["test"],
    summary: "create a widget",
    auth: "user",
    body: CreateWidget,
    idempotent: true,
    audit: "widget.create",
    hidden: true,
    responses: { 201: Widget },
    handler: async ({ deps, principal, body, audit }) => {
      if (knobs.createDelayMs > 0) await new Promise((r) => setTimeout(r, knobs.createDelayMs));
      await knobs.gate;
      if (knobs.fail500Once) {
        knobs.fail500Once = false;
        throw new Error("database went away (test)");
      }
      const [row] = await deps
        .db("test_widgets")
        .insert({ name: body.name, owner: principal.userId })
        .returning(["seq", "name", "owner"]);
      const w = present(row);
      audit.target("widget", w.id);
      audit.organization("org_test");
      return { status: 201, body: w, headers: { Location: `/test/widgets/${w.id}` } };
    },
  }),
  defineRoute({
    method: "get",
    path: "/test/widgets",
    operationId: "testListWidgets",
    tags: ["test"],
    summary: "list widgets",
    auth: "user",
    query: Page,
    hidden: true,
    responses: { 200: Paged(Widget) },
    handler: async ({ deps, query }) => ({
      status: 200,
      body: await paginate(deps.db, deps.db("test_widgets").orderBy("seq"), query, present),
    }),
  }),
  defineRoute({
    method: "get",
    path: "/test/widgets/:widgetId",
    operationId: "testGetWidget",
    tags: ["test"],
    summary: "get a widget",
    auth: "user",
    params: z.object({ widgetId: z.string().regex(/^wid_\d+$/) }),
    hidden: true,
    responses: { 200: Widget },
    handler: async ({ deps, params }) => {
      const row = await deps
        .db("test_widgets")
        .where({ seq: params.widgetId.slice(4) })
        .first();
      return { status: 200, body: present(row) };
    },
  }),
  defineRoute({
    method: "post",
    path: "/test/widgets/:widgetId/refuse",
    operationId: "testRefuse",
    tags: ["test"],
    summary: "always refused by the domain",
    auth: "user",
    params: z.object({ widgetId: z.string() }),
    audit: "widget.refuse",
    hidden: true,
    responses: { 200: Widget },
    handler: async ({ params, audit }) => {
      audit.target("widget", params.widgetId);
      throw new Conflict("widget is busy", { widget: params.widgetId });
    },
  }),
  defineRoute({
    method: "get",
    path: "/test/boom",
    operationId: "testBoom",
    tags: ["test"],
    summary: "unexpected failure",
    auth: "public",
    hidden: true,
    responses: { 200: z.object({}) },
    handler: async (_) => {
      throw new Error("connection string postgres://secret@db leaked?");
    },
  }),
  defineRoute({
    method: "get",
    path: "/test/leak",
    operationId: "testLeak",
    tags: ["test"],
    summary: "a presenter that returns a column it should not",
    auth: "user",
    hidden: true,
    responses: { 200: Widget },
    handler: async ({ deps }) => {
      const row = await deps.db("test_widgets").first();
      return { status: 200, body: { ...present(row), secret: row.secret } };
    },
  }),
  defineRoute({
    method: "post",
    path: "/test/password",
    operationId: "testPassword",
    tags: ["test"],
    summary: "allowed while a password change is pending",
    auth: "password-change",
    audit: "test.password",
    hidden: true,
    responses: { 204: z.undefined() },
    handler: async (_) => ({ status: 204, body: undefined }),
  }),
  defineRoute({
    method: "post",
    path: "/test/echo",
    operationId: "testEcho",
    tags: ["test"],
    summary: "echoes a public body",
    auth: "public",
    body: z.object({ text: z.string() }),
    audit: "test.echo",
    hidden: true,
    responses: { 200: z.object({ text: z.string() }) },
    handler: async ({ body }) => ({ status: 200, body }),
  }),
];
