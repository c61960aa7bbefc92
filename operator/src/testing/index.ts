// Test helpers of the operator, for its own tests, end-to-end suites and benchmarks.
export { type RecordedRequest, type StubControlPlane, startStubControlPlane } from "./stub-control-plane.ts";
export { captureLog, type CapturedLog } from "./log.ts";
