// Requests an apiserver has served, read from its /metrics (apiserver_request_total) by verb and resource,
// and the sums and differences a bench prints of them.
import type { KubeHttp } from "@berth/e2e";

export const MUTATING = ["POST", "PUT", "PATCH", "DELETE", "APPLY"];
export const READING = ["GET", "LIST", "WATCH"];

/** Requests the apiserver has served so far, by verb and resource: the mutating ones unless `verbs` says. */
export async function served(k: KubeHttp, verbs = MUTATING): Promise<Map<string, number>> {
  const res = await k.raw("GET", "/metrics", undefined);
  const out = new Map<string, number>();
  for (const line of res.text.split("\n")) {
    if (!line.startsWith("apiserver_request_total{")) continue;
    const verb = /verb="([A-Z]+)"/.exec(line)?.[1] ?? "";
    if (!verbs.includes(verb)) continue;
    const resource = /resource="([^"]*)"/.exec(line)?.[1] ?? "";
    const sub = /subresource="([^"]*)"/.exec(line)?.[1] ?? "";
    const key = `${verb} ${resource}${sub ? `/${sub}` : ""}`;
    out.set(key, (out.get(key) ?? 0) + Number(line.split(" ").at(-1)));
  }
  return out;
}
export const diff = (a: Map<string, number>, b: Map<string, number>) => {
  const d = new Map<string, number>();
  for (const [k, v] of b) if (v - (a.get(k) ?? 0) > 0) d.set(k, v - (a.get(k) ?? 0));
  return d;
};
export const total = (m: Map<string, number>) => [...m.values()].reduce((x, y) => x + y, 0);
/** The writes of the sessions' own objects: without leases, nodes (kwok's heartbeats) and Events. */
export const objects = (m: Map<string, number>) =>
  new Map([...m].filter(([k]) => !/ (leases|nodes|nodes\/status|events)$/.test(k)));
export const show = (m: Map<string, number>) =>
  [...m.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k}=${v}`)
    .join(", ");

/** Successful mutating requests the apiserver has served so far (apiserver_request_total). */
export async function writesServed(k: KubeHttp): Promise<number> {
  const res = await k.raw("GET", "/metrics", undefined);
  let n = 0;
  for (const line of res.text.split("\n")) {
    if (!line.startsWith("apiserver_request_total{")) continue;
    if (!/verb="(POST|PUT|PATCH|DELETE|APPLY)"/.test(line) || !/code="2\d\d"/.test(line)) continue;
    n += Number(line.split(" ").at(-1));
  }
  return n;
}
