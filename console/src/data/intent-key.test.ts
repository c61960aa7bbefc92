import { describe, expect, it } from "vitest";
import { ApiError } from "../api/client.ts";
import { IntentKey } from "./intent-key.ts";

describe("an intent's idempotency key", () => {
  let n = 0;
  const make = () => `k${++n}`;

  it("is kept for the retry when the answer was lost or the server failed", () => {
    const k = new IntentKey(make);
    const first = k.key;
    k.settle(new ApiError({ status: 0, code: "network_error", message: "" }));
    k.settle(new ApiError({ status: 503, code: "unavailable", message: "" }));
    k.settle(new ApiError({ status: 409, code: "idempotency_request_in_flight", message: "" }));
    expect(k.key).toBe(first);
  });

  it("is new after a success or a refusal, so the same movement made again is a new one", () => {
    const k = new IntentKey(make);
    const first = k.key;
    k.settle();
    const second = k.key;
    expect(second).not.toBe(first);
    k.settle(new ApiError({ status: 409, code: "insufficient_credits", message: "" }));
    expect(k.key).not.toBe(second);
  });
});
