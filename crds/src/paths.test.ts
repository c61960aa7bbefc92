import { describe, expect, it } from "vitest";
import { ClusterKind, SessionKind, sessionPath, VolumeKind } from "./kinds/index.ts";
import { resourcePath } from "./paths.ts";

describe("a resource's path", () => {
  it("names a namespaced kind's collection, object and status", () => {
    expect(resourcePath(VolumeKind, { namespace: "org-acme" })).toBe(
      "/apis/berth.dev/v1alpha1/namespaces/org-acme/volumes",
    );
    expect(resourcePath(VolumeKind, { namespace: "org-acme", name: "data", subresource: "status" })).toBe(
      "/apis/berth.dev/v1alpha1/namespaces/org-acme/volumes/data/status",
    );
  });

  it("lists a namespaced kind across all namespaces when no namespace is given", () => {
    expect(resourcePath(SessionKind)).toBe("/apis/berth.dev/v1alpha1/sessions");
  });

  it("names a cluster-scoped kind without a namespace", () => {
    expect(resourcePath(ClusterKind, { name: "clu-1" })).toBe("/apis/berth.dev/v1alpha1/clusters/clu-1");
  });

  it("encodes each segment", () => {
    expect(resourcePath(VolumeKind, { namespace: "a/b", name: "c d" })).toBe(
      "/apis/berth.dev/v1alpha1/namespaces/a%2Fb/volumes/c%20d",
    );
  });

  it("refuses a namespace for a cluster-scoped kind and a subresource without a name", () => {
    expect(() => resourcePath(ClusterKind, { namespace: "x" })).toThrow(/cluster-scoped/);
    expect(() => resourcePath(VolumeKind, { namespace: "x", subresource: "status" })).toThrow(/needs a name/);
  });

  it("is what sessionPath spells for a Session", () => {
    expect(sessionPath("org-acme", "s1", "status")).toBe(
      resourcePath(SessionKind, { namespace: "org-acme", name: "s1", subresource: "status" }),
    );
    expect(sessionPath("org-acme")).toBe(resourcePath(SessionKind, { namespace: "org-acme" }));
  });
});
