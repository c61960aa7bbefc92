// The router every listener uses: @koa/router with two rules it lacks. A static segment wins over a
// parameter (/sessions/preview-cost is never also /sessions/{sessionId}, whatever the method), and a known
// path asked with any method it does not serve is 405 with an Allow header, including methods such as
// TRACE or QUERY that nothing serves (the stock router answers those 501).

import { METHODS } from "node:http";
import Router from "@koa/router";

type MatchResult = ReturnType<Router["match"]>;
type Layer = MatchResult["path"][number];

/** A template's shape, one letter a segment: "a" static, "b" parameter, so the more static sorts first. */
function shape(layer: Layer): string {
  const path = typeof layer.path === "string" ? layer.path : "";
  return path
    .split("/")
    .filter((s) => s !== "")
    .map((s) => (s.startsWith(":") || s.includes("(") || s.startsWith("*") ? "b" : "a"))
    .join("");
}

export class SpecificRouter extends Router {
  constructor() {
    super({ methods: [...METHODS] });
  }

  override match(path: string, method: string): MatchResult {
    const all = super.match(path, method);
    const routes = all.path.filter((l) => l.methods.length > 0);
    if (routes.length < 2) return all;
    let best: string | undefined;
    for (const l of routes) {
      const s = shape(l);
      if (best === undefined || s < best) best = s;
    }
    const keep = (l: Layer) => l.methods.length === 0 || shape(l) === best;
    const pathAndMethod = all.pathAndMethod.filter(keep);
    return {
      path: all.path.filter(keep),
      pathAndMethod,
      route: pathAndMethod.some((l) => l.methods.length > 0),
    };
  }
}
