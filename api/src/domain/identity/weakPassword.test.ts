import { describe, expect, it } from "vitest";
import { weakPassword } from "./weakPassword.ts";

describe("a weak password", () => {
  it.each([
    ["000000000000", "repeated_characters"],
    ["aaaaaaaaaaaaaaaa", "repeated_characters"],
    ["abcabcabcabc", "repeated_characters"],
    ["121212121212", "repeated_characters"],
    ["123456789012", "sequence"],
    ["abcdefghijklmn", "sequence"],
    ["987654321098", "sequence"],
    ["qwertyuiop12", "common_password"],
    ["1q2w3e4r5t6y", "common_password"],
    ["Password1234!", "common_password"],
    ["iloveyou2024!!", "common_password"],
    ["  Football  2000", "common_password"],
    ["TRUSTNO1!!!!", "common_password"],
  ])("%s is refused as %s", (password, reason) => {
    expect(weakPassword(password)?.reason).toBe(reason);
  });

  it.each([
    "correct horse battery staple",
    "a temporary password",
    "a reset password 1",
    "member temporary password",
    "Tr0ub4dor&3-horse-staple",
    "9f8Kq2!xLm3Z",
  ])("%s passes", (password) => {
    expect(weakPassword(password)).toBeUndefined();
  });

  it("says why in words a person can act on", () => {
    expect(weakPassword("000000000000")?.message).toMatch(/repeated/);
    expect(weakPassword("password1234")?.message).toMatch(/common/);
  });
});
