import { describe, expect, it } from "vitest";
import { pickPlatform } from "./copy.ts";
import { BadReference, formatReference, parseReference } from "./reference.ts";
import { parseChallenge } from "./registry.ts";

describe("image references", () => {
  it.each([
    ["python", "docker.io/library/python:latest"],
    ["python:3.12", "docker.io/library/python:3.12"],
    ["jupyter/base-notebook:2024", "docker.io/jupyter/base-notebook:2024"],
    ["ghcr.io/org/app:1", "ghcr.io/org/app:1"],
    ["localhost/app", "localhost/app:latest"],
    ["127.0.0.1:5001/probe/app:1", "127.0.0.1:5001/probe/app:1"],
    [`quay.io/org/app@sha256:${"a".repeat(64)}`, `quay.io/org/app@sha256:${"a".repeat(64)}`],
  ])("reads %s as %s", (input, full) => {
    expect(formatReference(parseReference(input))).toBe(full);
  });

  it.each([
    ["user:pw@ghcr.io/org/app:1", "credentials"],
    ["https://user:pw@ghcr.io/org/app", "credentials"],
    ["ghcr.io/Org/app", "syntax"],
    ["app:", "syntax"],
    ["app@sha256:abc", "syntax"],
    ["a//b", "syntax"],
    ["", "syntax"],
    [`x/${"a".repeat(600)}`, "too_long"],
  ])("refuses %s (%s)", (input, reason) => {
    try {
      parseReference(input);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(BadReference);
      expect((e as BadReference).reason).toBe(reason);
    }
  });
});

describe("registry challenges", () => {
  it("reads a bearer challenge with quoted values holding commas", () => {
    expect(
      parseChallenge(
        'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:a/b:pull,push"',
      ),
    ).toEqual({
      scheme: "bearer",
      params: {
        realm: "https://auth.docker.io/token",
        service: "registry.docker.io",
        scope: "repository:a/b:pull,push",
      },
    });
  });
});

describe("platforms", () => {
  const entry = (os: string, architecture: string, variant?: string) => ({
    digest: `sha256:${"0".repeat(64)}`,
    size: 1,
    platform: { os, architecture, ...(variant ? { variant } : {}) },
  });
  it("takes the first wanted platform the index has; a wanted one without a variant takes any", () => {
    const idx = [entry("linux", "arm", "v7"), entry("linux", "amd64"), entry("windows", "amd64")];
    expect(pickPlatform(idx, ["linux/arm64", "linux/amd64"])).toBe(idx[1]);
    expect(pickPlatform(idx, ["linux/arm"])).toBe(idx[0]);
    expect(pickPlatform(idx, ["linux/s390x"])).toBeUndefined();
  });
});
