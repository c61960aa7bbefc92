// The whole path with real sessions: Alice creates a session through the API, the worker places it and
// the GPU cluster's operator makes its pod; she asks for connect links, opens the notebook through her
// cluster's gateway (TLS, its own port, its operator token), reads the pod's log through the API, pauses
// the session and finds the same tab telling her it is paused. (The sessions bed from e2e/src/sessions
// with a gateway per GPU cluster added, following its operator's table of session pods; the stand-in
// application answers behind the gateways, dialled in place of the pod's address, which kwok makes up.)

import {
  httpVerifier,
  RouteFeedUpstreams,
  type RunningGateway,
  selfSignedCertificate,
  startGateway,
} from "@berth/operator/gateway";
import { cookieFrom, get } from "@berth/operator/gateway/testing";
import { type RunningStandin, startStandin } from "@berth/operator/standin";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answered, bedApi, refusalOf } from "../api-client.ts";
import { adminKube, SESSIONS_NS, type SessionsBed, startSessionsBed } from "../sessions/harness.ts";
import { until } from "../until.ts";

let bed: SessionsBed;
let standin: RunningStandin;
const gateways: Record<string, { gateway: RunningGateway; ca: string; routes: RouteFeedUpstreams }> = {};

beforeAll(async () => {
  bed = await startSessionsBed();
  standin = await startStandin({ name: "the sessions bed" });
  for (const [name, h] of Object.entries(bed.gpu)) {
    const tls = selfSignedCertificate({ names: ["127.0.0.1"] });
    // The gateway has no Kubernetes credential: it follows the operator's table with the operator token.
    const routes = new RouteFeedUpstreams({
      url: () => (h.operator ? `${h.operator.url}/routes` : undefined),
      tokenFile: h.tokenFile,
      dial: () => ({ host: "127.0.0.1", port: standin.port }),
    }).start();
    await routes.synced();
    const gateway = await startGateway({
      clusterId: h.id,
      verifier: httpVerifier({ baseUrl: bed.plane.url, tokenFile: h.tokenFile, timeoutMs: 3000 }),
      upstreams: routes,
      tls,
      host: "127.0.0.1",
      port: 0,
    });
    gateways[name] = { gateway, ca: tls.certPem, routes };
    await bedApi(bed, bed.superAdmin).call("updateCluster", {
      params: { clusterId: h.id },
      body: { session_domain: `127.0.0.1:${gateway.port}` },
    });
  }
});

afterAll(async () => {
  for (const g of Object.values(gateways)) await g.gateway.close();
  await standin?.close();
  await bed?.stop();
});

describe("a session Alice started", () => {
  it("opens through its cluster's gateway, shows its pod's log, and says it is paused after a pause", async () => {
    const alice = bedApi(bed, bed.alice);
    const created = await answered(bed, bed.alice, (api) =>
      api.call("createSession", { body: { offering: "h100", preset: "gpu-small", image: "jupyterlab" } }),
    );
    expect(created.status).toBe(201);
    const id = created.body.id;
    const running = await bed.waitFor(bed.alice, id, (s) => s.phase === "Running", "Running", 60_000);
    const { gateway, ca, routes } = gateways["gpu-a"] as (typeof gateways)[string];
    expect(running.cluster_id).toBe(bed.gpu["gpu-a"]?.id);
    const gpuA = bed.gpu["gpu-a"];
    if (!gpuA) throw new Error("the bed has no gpu-a");
    const gk = adminKube(gpuA.cluster);

    // The gateway's route is the pod's own address and application port, as the cluster has them; no
    // Service was made for the session.
    try {
      const pod = await gk.json<{ status: { podIP: string } }>(
        "GET",
        `/api/v1/namespaces/${SESSIONS_NS}/pods/${running.resource_name}`,
      );
      expect(pod.status.podIP).toBeTruthy();
      await until("the route to the pod", async () => routes.route(running.resource_name) !== undefined, 10_000, 25);
      expect(routes.route(running.resource_name)).toEqual({ host: pod.status.podIP, port: 8888 });
      const services = await gk.raw("GET", `/api/v1/namespaces/${SESSIONS_NS}/services/${running.resource_name}`);
      expect(services.status).toBe(404);
    } finally {
      gk.close();
    }

    // Links on gpu-a's gateway; Bob, in the same organization, gets none.
    const links = await alice.call("getSessionConnectLinks", { params: { sessionId: id } });
    expect(links.session_domain).toBe(`127.0.0.1:${gateway.port}`);
    const bobs = await refusalOf(bedApi(bed, bed.bob).call("getSessionConnectLinks", { params: { sessionId: id } }));
    expect(bobs.status).toBe(404);

    // Open the notebook: 303 with the cookie, then the application.
    const first = await get(links.links.lab, { ca });
    expect(first.status, first.body).toBe(303);
    const cookie = cookieFrom(first) as string;
    const lab = await get(new URL(first.headers.location as string, links.links.lab).toString(), {
      ca,
      headers: { cookie },
    });
    expect(lab.status).toBe(200);
    expect(lab.body).toContain("<h1>JupyterLab</h1>");
    expect((await get(links.links.lab, { ca })).status).toBe(403); // the same link again

    // The log is what the cluster's kubelet (kwok) serves for the pod.
    const podLog = adminKube(gpuA.cluster);
    let expected: string;
    try {
      expected = (await podLog.raw("GET", `/api/v1/namespaces/${SESSIONS_NS}/pods/${running.resource_name}/log`)).text;
    } finally {
      podLog.close();
    }
    const logs = await alice.call("getSessionLogs", { params: { sessionId: id }, query: { tail: 100 } });
    expect(logs.lines).toEqual(expected.trimEnd().split("\n"));
    expect(logs.lines.length).toBeGreaterThan(0);

    // Pause: the pod goes; the open tab's next request says so, and new links are refused.
    const paused = await answered(bed, bed.alice, (api) => api.call("pauseSession", { params: { sessionId: id } }));
    expect(paused.status).toBe(202);
    await bed.waitFor(bed.alice, id, (s) => s.phase === "Paused", "Paused", 60_000);
    await until("the route gone", async () => routes.route(running.resource_name) === undefined, 10_000, 25);
    const after = await get(new URL(first.headers.location as string, links.links.lab).toString(), {
      ca,
      headers: { cookie },
    });
    expect(after.status).toBe(409);
    expect(after.body).toContain("This session is paused");
    const refused = await refusalOf(alice.call("getSessionConnectLinks", { params: { sessionId: id } }));
    expect(refused.status).toBe(409);
    expect(refused.details).toMatchObject({ reason: "session_not_running", phase: "Paused" });
  });
});
