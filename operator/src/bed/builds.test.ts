// The operator of a build cluster of the test bed, with exactly operatorRbac({buildsNamespace})'s grants:
// an ImageBuild written there becomes a Job, reported to the control plane's internal plane with the
// operator token; deleting the ImageBuild (a cancel) deletes the Job.
import { ImageBuildKind, resourcePath } from "@berth/crds";
import { type Bed, BUILDS_NS, eventually, startBed } from "@berth/e2e/operator-bed";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningOperator, startOperator } from "../operator.ts";
import { captureLog } from "../testing/log.test-support.ts";
import { type StubControlPlane, startStubControlPlane } from "../testing/stub-control-plane.test-support.ts";

let bed: Bed;
let stub: StubControlPlane;
let operator: RunningOperator | undefined;
const logs = captureLog("debug", process.env.BERTH_TEST_ECHO_LOGS === "1");

beforeAll(async () => {
  bed = await startBed([], { builds: true });
  stub = await startStubControlPlane({ tokens: { "token-bed": "clu_bed" } });
  const config = bed.config({
    identity: "operator-0",
    tokenFile: bed.writeToken("token", "token-bed"),
    controlPlaneUrl: stub.url,
    buildsNamespace: BUILDS_NS,
  });
  operator = await startOperator(config, { log: logs.log });
}, 120_000);

afterAll(async () => {
  await operator?.stop();
  await stub?.close();
  await bed?.stop();
});

const jobsOf = async (buildId: string) =>
  (
    (await bed.admin.json("GET", `/apis/batch/v1/namespaces/${BUILDS_NS}/jobs`)) as {
      items: { metadata: { labels: Record<string, string>; deletionTimestamp?: string } }[];
    }
  ).items.filter((j) => j.metadata.labels["berth.dev/image-build"] === buildId && !j.metadata.deletionTimestamp);

describe("a build cluster's operator", () => {
  it("makes the Job of an ImageBuild, reports it with its token, and deletes it when the ImageBuild goes", async () => {
    const build = ImageBuildKind.build(
      { name: "build-opbed0000001", namespace: BUILDS_NS },
      {
        buildId: "bld-opbed0000001",
        cluster: "clu_bed",
        dockerfile: "FROM scratch\n",
        destination: "registry.bed.test/org/usr/lab:1",
        insecureRegistry: true,
        builderImage: "moby/buildkit:rootless",
        timeoutSeconds: 600,
        egressCidrs: ["10.0.0.0/8"],
      },
    );
    await bed.admin.json("POST", resourcePath(ImageBuildKind, { namespace: BUILDS_NS }), build);
    await eventually(async () => ((await jobsOf("bld-opbed0000001")).length === 1 ? true : undefined), "the Job");
    const report = await eventually(
      () =>
        stub.requests.find(
          (r) =>
            r.path === "/internal/v1/image-builds/status" &&
            (r.body as { reports: { build: string }[] }).reports[0]?.build === "bld-opbed0000001",
        ),
      "a status report",
    );
    expect(report.token).toBe("token-bed");
    expect(report.body).toMatchObject({
      cluster_id: "clu_bed",
      reports: [{ build: "bld-opbed0000001", phase: "Pending", job_created_at: expect.any(String) }],
    });
    const policy = (await bed.admin.json(
      "GET",
      `/apis/networking.k8s.io/v1/namespaces/${BUILDS_NS}/networkpolicies/image-builds`,
    )) as { spec: { egress: unknown[] } };
    expect(policy.spec.egress).toContainEqual({ to: [{ ipBlock: { cidr: "10.0.0.0/8" } }] });

    await bed.admin.json("DELETE", resourcePath(ImageBuildKind, { namespace: BUILDS_NS, name: "build-opbed0000001" }));
    await eventually(async () => ((await jobsOf("bld-opbed0000001")).length === 0 ? true : undefined), "the Job gone");
  });
});
