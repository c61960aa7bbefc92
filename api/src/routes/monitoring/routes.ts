// /api/v1/monitoring: catalogued panels over the control plane's metrics server (docs/dev/monitoring.md).
// The browser names a panel and a scope; the server builds the query, bounds the step, narrows it to the
// caller's label scope and answers series ready to plot. A metrics server that is down is 503
// `unavailable`, never a 500.

import { PANELS } from "../../domain/monitoring/panels.ts";
import { Invalid } from "../../errors.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { presentPanel, rangeOf } from "./presenter.ts";
import { PanelAnswer, PanelList, PanelParams, PanelQuery, PlotAnswer, RawQueryBody } from "./schemas.ts";

const SCOPE_RULE =
  "Scope follows the caller's role: a member sees the series of their own sessions; an organization admin those of their organizations' sessions; a project admin their projects'; super_admin everything. Asking for more narrows the answer (a fleet panel shows only the caller's series), except a session the caller may not see, which is 404.";

export const listPanels = defineRoute({
  method: "get",
  path: "/api/v1/monitoring/panels",
  operationId: "listMonitoringPanels",
  tags: ["monitoring"],
  summary: "The catalogue of monitoring panels",
  auth: "user",
  responses: { 200: PanelList },
  handler: async () => ({ status: 200 as const, body: { data: PANELS.map(presentPanel) } }),
});

export const getPanel = defineRoute({
  method: "get",
  path: "/api/v1/monitoring/panels/:panelId",
  operationId: "getMonitoringPanel",
  tags: ["monitoring"],
  summary: "A panel's series over a range, ready to plot",
  description: `${SCOPE_RULE} The step is chosen by the server (at most max_points points per series); a range longer than 90 days or in the wrong order is 400 validation_failed; an unknown panel 404 not_found; the metrics server down 503 unavailable.`,
  auth: "user",
  params: PanelParams,
  query: PanelQuery,
  responses: { 200: PanelAnswer },
  handler: async ({ deps, principal, params, query }) => {
    const { panel, ...answer } = await deps.monitoring.panel(
      principal,
      params.panelId,
      { cluster: query.cluster, node: query.node, card: query.card, session: query.session },
      rangeOf(query, deps.clock.now()),
    );
    return { status: 200 as const, body: { panel: presentPanel(panel), ...answer } };
  },
});

export const rawQuery = defineRoute({
  method: "post",
  path: "/api/v1/monitoring/query",
  operationId: "queryMonitoring",
  audit: "monitoring.query",
  tags: ["monitoring"],
  summary: "A raw range query (administrators), narrowed like panels",
  description: `For super_admins and organization admins; anyone else 403 forbidden. ${SCOPE_RULE} A query the metrics server refuses is 400 validation_failed with its message.`,
  auth: "user",
  body: RawQueryBody,
  responses: { 200: PlotAnswer },
  handler: async ({ deps, principal, body }) => {
    if ((body.from === undefined) !== (body.to === undefined))
      throw new Invalid("give both `from` and `to`, or neither", [
        { path: ["body", body.from ? "to" : "from"], message: "required with the other", code: "required" },
      ]);
    return {
      status: 200 as const,
      body: await deps.monitoring.raw(principal, body.query, rangeOf(body, deps.clock.now())),
    };
  },
});

export const routes: RouteDef[] = [listPanels, getPanel, rawQuery];
