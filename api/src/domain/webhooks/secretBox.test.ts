// The key list's parsing and sealing (pure); the dispatcher's use of it is in dispatcher.pg.test.ts.
import { describe, expect, it } from "vitest";
import { parseSecretKeys, SecretUnreadable, WebhookSecretBox } from "./secretBox.ts";

const b64 = (fill: number) => Buffer.alloc(32, fill).toString("base64");

describe("webhook secret keys", () => {
  it("parses id:base64 pairs, first one first", () => {
    const keys = parseSecretKeys(` new:${b64(1)} , old:${b64(2)} `);
    expect(keys.map((k) => k.id)).toEqual(["new", "old"]);
    expect(keys[0]?.key).toEqual(Buffer.alloc(32, 1));
  });

  it("refuses what cannot be a key list, saying what is wrong", () => {
    expect(() => parseSecretKeys("")).toThrow(/at least one key/);
    expect(() => parseSecretKeys(b64(1))).toThrow(/no valid id/);
    expect(() => parseSecretKeys("k1:c2hvcnQ=")).toThrow(/32 bytes/);
    expect(() => parseSecretKeys(`k1:${b64(1)},k1:${b64(2)}`)).toThrow(/twice/);
  });

  it("seals so that only the same endpoint opens, under a listed key, unaltered", () => {
    const box = new WebhookSecretBox(parseSecretKeys(`k2:${b64(2)},k1:${b64(1)}`));
    const sealed = box.seal("whsec_abc", "whk_1");
    expect(sealed).toMatch(/^enc:v1:k2:/);
    expect(sealed).not.toContain("whsec_abc");
    expect(box.open(sealed, "whk_1")).toBe("whsec_abc");
    expect(box.seal("whsec_abc", "whk_1")).not.toBe(sealed); // a fresh IV each time
    expect(() => box.open(sealed, "whk_2")).toThrow(SecretUnreadable);
    const tampered = sealed.slice(0, -4) + (sealed.endsWith("AAAA") ? "BBBB" : "AAAA");
    expect(() => box.open(tampered, "whk_1")).toThrow(SecretUnreadable);
    const older = new WebhookSecretBox(parseSecretKeys(`k1:${b64(1)}`)).seal("whsec_old", "whk_1");
    expect(box.open(older, "whk_1")).toBe("whsec_old");
    expect(() => new WebhookSecretBox(parseSecretKeys(`k3:${b64(3)}`)).open(older, "whk_1")).toThrow(/k1/);
    expect(box.open("whsec_plain", "whk_1")).toBe("whsec_plain"); // written before encryption
  });
});
