// Passwords refused for being guessable, as current password guidance asks of a verifier (a list of
// commonly used and breached values, repetitions, sequences), checked offline. The list is zxcvbn-ts'
// common-passwords dictionary (about 49,000 entries, from breach corpora), a dependency of this
// workspace: nothing is fetched at run time.
import { dictionary } from "@zxcvbn-ts/language-common";

export type WeakPasswordReason = "common_password" | "repeated_characters" | "sequence";

export interface WeakPassword {
  reason: WeakPasswordReason;
  message: string;
}

let common: Set<string> | undefined;
/** Built on first use: the list is decompressed once per process (~50 ms), not at import. */
function commonPasswords(): Set<string> {
  common ??= new Set(dictionary["passwords-common"].map((p) => p.toLowerCase()));
  return common;
}

/** A short unit said again and again: "000000000000", "abcabcabcabc", "12121212…". */
function isRepetition(p: string): boolean {
  for (let unit = 1; unit <= 4 && unit * 2 <= p.length; unit++) {
    if (
      p
        .slice(0, unit)
        .repeat(Math.ceil(p.length / unit))
        .slice(0, p.length) === p
    )
      return true;
  }
  return false;
}

/** Each character one step from the last, in one direction: "123456789012", "abcdefghijkl", "987654321098". */
function isSequence(p: string): boolean {
  const step = (a: string, b: string): number => {
    if (/\d/.test(a) && /\d/.test(b))
      return (Number(b) - Number(a) + 10) % 10 === 1 ? 1 : (Number(a) - Number(b) + 10) % 10 === 1 ? -1 : 0;
    return b.charCodeAt(0) - a.charCodeAt(0);
  };
  const first = step(p[0] ?? "", p[1] ?? "");
  if (first !== 1 && first !== -1) return false;
  for (let i = 2; i < p.length; i++) if (step(p[i - 1] ?? "", p[i] ?? "") !== first) return false;
  return true;
}

/**
 * Why a password is too easy to guess, or undefined. Checked: the whole password (case-insensitive)
 * against the list; the same with leading and trailing digits, spaces and punctuation removed
 * ("Password1234!" is "password"); one short unit repeated; a run of consecutive characters.
 */
export function weakPassword(password: string): WeakPassword | undefined {
  const p = password.toLowerCase();
  if (isRepetition(p))
    return {
      reason: "repeated_characters",
      message: "is one character or a short group repeated; choose a longer phrase",
    };
  if (isSequence(p))
    return { reason: "sequence", message: "is a run of consecutive characters; choose a longer phrase" };
  const list = commonPasswords();
  const core = p.replace(/^[\d\s\p{P}\p{S}]+|[\d\s\p{P}\p{S}]+$/gu, "");
  if (list.has(p) || (core.length >= 4 && list.has(core)) || list.has(p.replace(/\s+/g, "")))
    return {
      reason: "common_password",
      message: "is a commonly used or breached password (or one with digits or symbols added); choose another",
    };
  return undefined;
}
