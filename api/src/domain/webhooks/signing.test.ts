// Our signatures, checked by the independent `standardwebhooks` implementation.
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { nextDelayMs, parseRetryAfter } from "./retry.ts";
import { newWebhookSecret, signatureHeaders } from "./signing.ts";

describe("Standard Webhooks signing", () => {
  it("is accepted by the standardwebhooks package, and refused with another secret or a changed body", () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const body = JSON.stringify({ type: "session.running", timestamp: new Date().toISOString(), data: { a: 1 } });
    const h = signatureHeaders([secret], "msg_1", Math.floor(Date.now() / 1000), body);
    expect(new Webhook(secret).verify(body, h)).toMatchObject({ type: "session.running" });
    expect(() => new Webhook(newWebhookSecret()).verify(body, h)).toThrow();
    expect(() => new Webhook(secret).verify(`${body} `, h)).toThrow();
  });

  it("signs with both secrets during a rotation, so either verifies", () => {
    const [old, fresh] = [newWebhookSecret(), newWebhookSecret()];
    const body = "{}";
    const h = signatureHeaders([fresh, old], "msg_2", Math.floor(Date.now() / 1000), body);
    expect(h["webhook-signature"]?.split(" ")).toHaveLength(2);
    expect(() => new Webhook(old).verify(body, h)).not.toThrow();
    expect(() => new Webhook(fresh).verify(body, h)).not.toThrow();
  });
});

describe("the retry schedule", () => {
  const schedule = [0, 5_000, 300_000];
  it("follows the schedule with ±20 % jitter and ends after its last step", () => {
    expect(nextDelayMs(schedule, 1, null, () => 0)).toBe(4_000);
    expect(nextDelayMs(schedule, 1, null, () => 1)).toBe(6_000);
    expect(nextDelayMs(schedule, 3, null)).toBeNull();
  });
  it("waits as long as Retry-After asks, up to the schedule's last step", () => {
    expect(nextDelayMs(schedule, 1, 60_000, () => 0.5)).toBe(60_000);
    expect(nextDelayMs(schedule, 1, 10_000_000, () => 0.5)).toBe(300_000);
    expect(parseRetryAfter("120", new Date())).toBe(120_000);
    expect(parseRetryAfter("soon", new Date())).toBeNull();
  });
});
