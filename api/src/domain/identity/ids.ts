import { randomBytes } from "node:crypto";

const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";
const LENGTH = 20;

/** `usr_`, `org_`, `prj_` + 20 lowercase alphanumerics (~103 bits): unguessable, URL- and label-safe. */
export function newId(prefix: "usr" | "org" | "prj"): string {
  let s = "";
  while (s.length < LENGTH) {
    for (const b of randomBytes(LENGTH)) {
      // 252 = 7 * 36: rejecting the top bytes keeps every character equally likely.
      if (b < 252 && s.length < LENGTH) s += ALPHABET[b % 36];
    }
  }
  return `${prefix}_${s}`;
}
