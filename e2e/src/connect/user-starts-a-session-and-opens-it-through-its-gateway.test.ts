// The whole path with real sessions: Alice creates a session through the API, the worker places it and
// the GPU cluster's operator makes its pod; she asks for connect links, opens the notebook through her
// cluster's gateway (TLS, its own port, its operator token), reads the pod's log through the API, pauses
// the session and finds the same tab telling her it is paused. (The sessions bed from e2e/src/sessions
// with a gateway per GPU cluster added; the stand-in application answers behind the gateways.)

import { gatewayRbac } from "@berth/operator";
import {
  gatedUpstreams,
  httpVerifier,
  kubePodRunning,
  type RunningGateway,
  StaticUpstreams,
  selfSignedCertificate,
  startGateway,
} from "@berth/operator/gateway";
import { cookieFrom, get } from "@berth/operator/gateway/testing";
import { type RunningStandin, startStandin } from "@berth/operator/standin";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminKube, SESSIONS_NS, type SessionsBed, startSessionsBed } from "../sessions/harness.ts";

let bed: SessionsBed;
let standin: RunningStandin;
const gateways: Record<string, { gateway: RunningGateway; ca: string }> = {};

beforeAll(async () => {
  bed = await startSessionsBed();
  standin = await startStandin({ name: "the sessions bed" });
  for (const [name, h] of Object.entries(bed.gpu)) {
    const tls = selfSignedCertificate({ names: ["127.0.0.1"] });
    // The gateway asks Kubernetes with exactly the rules it declares (a missing one fails this journey).
    const [grant] = gatewayRbac({ sessionsNamespace: SESSIONS_NS }).namespaceRules;
    const credential = await h.cluster.mintCredential({
      name: "berth-gateway",
      namespace: SESSIONS_NS,
      rules: grant?.rules ?? [],
    });
    const gateway = await startGateway({
      clusterId: h.id,
      verifier: httpVerifier({ baseUrl: bed.plane.url, tokenFile: h.tokenFile, timeoutMs: 3000 }),
      upstreams: gatedUpstreams(
        new StaticUpstreams({ "*": `127.0.0.1:${standin.port}` }),
        kubePodRunning({
          server: h.cluster.server,
          caPem: h.cluster.caPem,
          token: credential.token,
          namespace: SESSIONS_NS,
        }),
        { ttlMs: 200 },
      ),
      tls,
      host: "127.0.0.1",
      port: 0,
    });
    gateways[name] = { gateway, ca: tls.certPem };
    const patched = await bed.call(bed.superAdmin, "PATCH", `/api/v1/clusters/${h.id}`, {
      session_domain: `127.0.0.1:${gateway.port}`,
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
  }
});

afterAll(async () => {
  for (const g of Object.values(gateways)) await g.gateway.close();
  await standin?.close();
  await bed?.stop();
});

describe("a session Alice started", () => {
  it("opens through its cluster's gateway, shows its pod's log, and says it is paused after a pause", async () => {
    const created = await bed.call(bed.alice, "POST", "/api/v1/sessions", {
      offering: "h100",
      preset: "gpu-small",
      image: "jupyterlab",
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    const running = await bed.waitFor(bed.alice, id, (s) => s.phase === "Running", "Running", 60_000);
    const { gateway, ca } = gateways["gpu-a"] as { gateway: RunningGateway; ca: string };
    expect(running.cluster_id).toBe(bed.gpu["gpu-a"]?.id);

    // Links on gpu-a's gateway; Bob, in the same organization, gets none.
    const links = await bed.call(bed.alice, "GET", `/api/v1/sessions/${id}/connect`);
    expect(links.status, JSON.stringify(links.body)).toBe(200);
    expect(links.body.session_domain).toBe(`127.0.0.1:${gateway.port}`);
    expect((await bed.call(bed.bob, "GET", `/api/v1/sessions/${id}/connect`)).status).toBe(404);

    // Open the notebook: 303 with the cookie, then the application.
    const first = await get(links.body.links.lab, { ca });
    expect(first.status, first.body).toBe(303);
    const cookie = cookieFrom(first) as string;
    const lab = await get(new URL(first.headers.location as string, links.body.links.lab).toString(), {
      ca,
      headers: { cookie },
    });
    expect(lab.status).toBe(200);
    expect(lab.body).toContain("<h1>JupyterLab</h1>");
    expect((await get(links.body.links.lab, { ca })).status).toBe(403); // the same link again

    // The log is what the cluster's kubelet (kwok) serves for the pod.
    const gpuA = bed.gpu["gpu-a"];
    if (!gpuA) throw new Error("the bed has no gpu-a");
    const podLog = adminKube(gpuA.cluster);
    let expected: string;
    try {
      expected = (await podLog.raw("GET", `/api/v1/namespaces/${SESSIONS_NS}/pods/${running.resource_name}/log`)).text;
    } finally {
      podLog.close();
    }
    const logs = await bed.call(bed.alice, "GET", `/api/v1/sessions/${id}/logs?tail=100`);
    expect(logs.status, JSON.stringify(logs.body)).toBe(200);
    expect(logs.body.lines).toEqual(expected.trimEnd().split("\n"));
    expect(logs.body.lines.length).toBeGreaterThan(0);

    // Pause: the pod goes; the open tab's next request says so, and new links are refused.
    expect((await bed.call(bed.alice, "POST", `/api/v1/sessions/${id}/pause`)).status).toBe(202);
    await bed.waitFor(bed.alice, id, (s) => s.phase === "Paused", "Paused", 60_000);
    await new Promise((r) => setTimeout(r, 300));
    const after = await get(new URL(first.headers.location as string, links.body.links.lab).toString(), {
      ca,
      headers: { cookie },
    });
    expect(after.status).toBe(409);
    expect(after.body).toContain("This session is paused");
    const refused = await bed.call(bed.alice, "GET", `/api/v1/sessions/${id}/connect`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.details).toMatchObject({ reason: "session_not_running", phase: "Paused" });
  });
});
