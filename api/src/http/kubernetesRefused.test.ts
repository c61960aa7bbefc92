// A Kubernetes refusal of Berth's own credential (an install whose RBAC lacks a grant) answers 500
// `kubernetes_refused` naming the verb and the resource, not a bare `internal` that hides the cause.
// Real API over HTTP, Postgres and the bed's management cluster, with a credential that may do nothing.
import { OfferingKind, resourcePath, SessionKind } from "@berth/crds";
import { loadCrds } from "@berth/crds/manifests";
import { type Fleet, kubeConfigFrom, startFleet } from "@berth/e2e";
import { ApiextensionsV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type IdentityTestApi, startIdentityTestApi } from "../domain/identity/identity.test-support.ts";
import { resourceOfPath } from "./envelope.ts";

describe("the resource a Kubernetes path is about", () => {
  it("keeps the kind and group, drops namespaces and names", () => {
    const session = resourcePath(SessionKind, { namespace: "org-a", name: "s-1" });
    expect(resourceOfPath(`${session}/status`)).toBe("sessions.berth.dev/status");
    expect(resourceOfPath(`${resourcePath(OfferingKind, {})}?limit=500`)).toBe("offerings.berth.dev");
    expect(resourceOfPath("/api/v1/namespaces/org-a/pods/p/log")).toBe("pods/log");
    expect(resourceOfPath("/api/v1/namespaces/org-a")).toBe("namespaces");
    expect(resourceOfPath("/api/v1/nodes")).toBe("nodes");
  });
});

describe("a route whose Kubernetes read is refused", () => {
  let fleet: Fleet;
  let t: IdentityTestApi;

  beforeAll(async () => {
    fleet = await startFleet({ clusters: [{ name: "mgmt", kind: "management" }] });
    const admin = kubeConfigFrom(fleet.cluster("mgmt").kubeconfig);
    for (const crd of loadCrds())
      await admin.makeApiClient(ApiextensionsV1Api).createCustomResourceDefinition({ body: crd as never });
    const nothing = await fleet.cluster("mgmt").mintCredential({ name: "berth-api-without-grants", rules: [] });
    t = await startIdentityTestApi({ kubeConfig: kubeConfigFrom(nothing.kubeconfig) });
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
    await fleet?.stop();
  });

  it("answers 500 kubernetes_refused with the verb and the resource the grant is missing for", async () => {
    const user = await t.aUser();
    const r = await t.request("GET", "/api/v1/offerings", { token: user.token });
    expect(r.status, JSON.stringify(r.body)).toBe(500);
    expect(r.body.error).toMatchObject({
      code: "kubernetes_refused",
      details: { method: "GET", resource: "offerings.berth.dev", status: 403 },
    });
    expect(r.body.error.message).toContain("RBAC");
  });
});
