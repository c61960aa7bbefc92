// Test helpers of the operator, for its own tests, end-to-end suites and benchmarks.

export { type CapturedLog, captureLog } from "./log.ts";
export { type RecordedRequest, type StubControlPlane, startStubControlPlane } from "./stub-control-plane.ts";
export {
  dcgmExposition,
  type StubDcgmExporter,
  type StubGpu,
  startStubDcgmExporter,
} from "./stub-dcgm-exporter.ts";
