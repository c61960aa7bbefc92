import { examples } from "@berth/crds/testing";
import { describe, expect, it } from "vitest";
import { APP_PORTS, podManifest } from "./manifests.ts";
import { type RoutablePod, routeOfPod, SessionRoutes } from "./routes.ts";

const pod = (over: Partial<NonNullable<RoutablePod["status"]>> = {}, deleting = false): RoutablePod => ({
  metadata: {
    name: "ses-abc",
    labels: { "berth.dev/session": "ses-abc" },
    ...(deleting ? { deletionTimestamp: "2026-11-26T10:00:00Z" } : {}),
  },
  spec: { containers: [{ ports: [{ name: "http", containerPort: 8888 }] }] },
  status: { phase: "Running", podIP: "10.1.2.3", conditions: [{ type: "Ready", status: "True" }], ...over },
});

describe("the gateway's routes from the pod watch", () => {
  it("route a Running, Ready pod to its IP and the port named http, and nothing else", () => {
    expect(routeOfPod(pod())).toEqual({ host: "10.1.2.3", port: 8888 });
    expect(routeOfPod(pod({ conditions: [{ type: "Ready", status: "False" }] }))).toBeUndefined();
    expect(routeOfPod(pod({ phase: "Pending" }))).toBeUndefined();
    expect(routeOfPod(pod({ podIP: "" }))).toBeUndefined();
    expect(routeOfPod(pod({}, true))).toBeUndefined();
  });

  it("name the port the operator's pods declare for every kind of application", () => {
    for (const kind of ["jupyterlab", "code-server", "terminal"] as const) {
      const m = examples.SessionMirror();
      m.metadata = { name: "ses-abc", namespace: "berth-sessions", uid: "uid-1", generation: 1 };
      m.spec.imageKind = kind;
      const manifest = podManifest(m, { namespace: "berth-sessions" });
      const route = routeOfPod({ ...manifest, status: pod().status } as RoutablePod);
      expect(route?.port, kind).toBe(APP_PORTS[kind]);
    }
  });

  it("tell listeners of changes only", () => {
    const r = new SessionRoutes();
    const seen: string[] = [];
    r.subscribe((c) => seen.push(`${c.cr}=${c.route ? `${c.route.host}:${c.route.port}` : "-"}`));
    r.observe(pod(), false);
    r.observe(pod(), false);
    r.observe(pod({ podIP: "10.1.2.4" }), false);
    r.observe(pod({}, true), false);
    r.observe(pod(), true);
    expect(seen).toEqual(["ses-abc=10.1.2.3:8888", "ses-abc=10.1.2.4:8888", "ses-abc=-"]);
    expect(r.snapshot()).toEqual({});
  });
});
