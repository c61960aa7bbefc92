import { randomInt } from "node:crypto";

const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

/** `clu_` + 16 random lowercase letters and digits (~82 bits): a new one for every registration. */
export function newClusterId(): string {
  let s = "clu_";
  for (let i = 0; i < 16; i++) s += ALPHABET[randomInt(ALPHABET.length)];
  return s;
}

export const CLUSTER_ID_PATTERN = /^clu_[a-z0-9]{1,59}$/;
