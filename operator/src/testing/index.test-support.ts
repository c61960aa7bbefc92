// Test helpers of the operator, for its own tests, end-to-end suites and benchmarks.

export { type CapturedLog, captureLog } from "./log.test-support.ts";
export {
  type RecordedRequest,
  type StubControlPlane,
  startStubControlPlane,
} from "./stub-control-plane.test-support.ts";
export {
  dcgmExposition,
  type StubDcgmExporter,
  type StubGpu,
  startStubDcgmExporter,
} from "./stub-dcgm-exporter.test-support.ts";
