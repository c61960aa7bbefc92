import { describe, expect, it } from "vitest";
import { passwordProblems } from "./password.ts";

describe("the password form's checks", () => {
  it("ask for 12 characters, a change and the same password twice", () => {
    expect(passwordProblems("old-password-1", "short", "short")).toEqual([
      "The new password needs at least 12 characters.",
    ]);
    expect(passwordProblems("same-password-1", "same-password-1", "same-password-1")).toEqual([
      "The new password must differ from the current one.",
    ]);
    expect(passwordProblems("old-password-1", "new-password-12", "new-password-13")).toEqual([
      "The two new passwords do not match.",
    ]);
    expect(passwordProblems("old-password-1", "new-password-12", "new-password-12")).toEqual([]);
  });
});
