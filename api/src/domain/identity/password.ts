// Password hashing with argon2id from node:crypto (Node 24; no native npm package). Hashes are stored as
// PHC strings, `$argon2id$v=19$m=19456,t=2,p=1$<salt>$<tag>`, so the parameters travel with each hash and
// can be raised later: `needsRehash` tells the login path to re-hash with the current ones.
import { argon2, createHash, randomBytes, timingSafeEqual } from "node:crypto";

export interface Argon2Params {
  /** Memory in KiB. */
  memoryKiB: number;
  /** Iterations (t). */
  passes: number;
  /** Lanes (p). */
  parallelism: number;
  /** Tag (hash) length in bytes. */
  tagLength: number;
}

/** OWASP's argon2id floor: 19 MiB, 2 passes, 1 lane. About 40 ms per hash on one core of the dev box. */
export const DEFAULT_ARGON2: Argon2Params = { memoryKiB: 19 * 1024, passes: 2, parallelism: 1, tagLength: 32 };

const SALT_BYTES = 16;
/**
 * A password we generated (bulk import): 144 random bits need no slow hash to resist guessing; a slow
 * hash protects what people choose. So it is stored as salted SHA-256 and an import of 10,000 accounts
 * does not spend 10,000 argon2id derivations (~40 ms of a core each). Only generatePassword's output is
 * ever stored this way; the account must change it at first sign-in, which stores argon2id.
 */
const GENERATED = /^\$berth-generated\$sha256\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;
const PHC = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

function b64(buf: Buffer): string {
  return buf.toString("base64").replace(/=+$/, "");
}

function derive(password: string, salt: Buffer, p: Argon2Params): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // Runs on the libuv thread pool: a login does not block the event loop for the other requests.
    argon2(
      "argon2id",
      {
        message: password,
        nonce: salt,
        memory: p.memoryKiB,
        passes: p.passes,
        parallelism: p.parallelism,
        tagLength: p.tagLength,
      },
      (err, key) => (err ? reject(err) : resolve(key)),
    );
  });
}

interface Parsed {
  params: Argon2Params;
  salt: Buffer;
  tag: Buffer;
}

function parse(hash: string): Parsed | undefined {
  const [, memoryKiB, passes, parallelism, salt, tag64] = PHC.exec(hash) ?? [];
  // Every group of PHC is required: a match has them all.
  if (salt === undefined || tag64 === undefined) return undefined;
  const tag = Buffer.from(tag64, "base64");
  return {
    params: {
      memoryKiB: Number(memoryKiB),
      passes: Number(passes),
      parallelism: Number(parallelism),
      tagLength: tag.length,
    },
    salt: Buffer.from(salt, "base64"),
    tag,
  };
}

export function describeParams(p: Argon2Params): string {
  return `argon2id m=${p.memoryKiB} KiB (${(p.memoryKiB / 1024).toFixed(0)} MiB), t=${p.passes}, p=${p.parallelism}, tag=${p.tagLength} B`;
}

export class PasswordHasher {
  readonly params: Argon2Params;
  readonly #dummy: Promise<string>;

  constructor(params: Argon2Params = DEFAULT_ARGON2) {
    if (params.memoryKiB < 19 * 1024 || params.passes < 2 || params.parallelism !== 1) {
      throw new Error(`argon2id parameters below the floor (m >= 19 MiB, t >= 2, p = 1): ${describeParams(params)}`);
    }
    this.params = params;
    // Made now, in the background, so that the first unknown email does not pay for it (and so answer
    // slower than a wrong password would).
    this.#dummy = this.hash(randomBytes(24).toString("base64url"));
  }

  async hash(password: string): Promise<string> {
    const salt = randomBytes(SALT_BYTES);
    const tag = await derive(password, salt, this.params);
    const p = this.params;
    return `$argon2id$v=19$m=${p.memoryKiB},t=${p.passes},p=${p.parallelism}$${b64(salt)}$${b64(tag)}`;
  }

  /** For generatePassword's output only (see GENERATED). */
  hashGenerated(secret: string): string {
    const salt = randomBytes(SALT_BYTES);
    const tag = createHash("sha256").update(salt).update(secret).digest();
    return `$berth-generated$sha256$${b64(salt)}$${b64(tag)}`;
  }

  /** False for a wrong password and for a hash we cannot read; never throws for either. */
  async verify(hash: string, password: string): Promise<boolean> {
    const generated = GENERATED.exec(hash);
    if (generated?.[1] !== undefined && generated[2] !== undefined) {
      const expected = Buffer.from(generated[2], "base64");
      const tag = createHash("sha256").update(Buffer.from(generated[1], "base64")).update(password).digest();
      // The same time as an argon2id check, so that sign-in timing does not tell imported accounts apart.
      await this.verifyDummy(password);
      return tag.length === expected.length && timingSafeEqual(tag, expected);
    }
    const parsed = parse(hash);
    if (!parsed) {
      await this.verifyDummy(password); // same cost as a real check
      return false;
    }
    const tag = await derive(password, parsed.salt, parsed.params);
    return tag.length === parsed.tag.length && timingSafeEqual(tag, parsed.tag);
  }

  /**
   * Spends the time of one real verification and answers false. The login path calls it for an unknown
   * email so that "no such account" and "wrong password" cannot be told apart by timing.
   */
  async verifyDummy(password: string): Promise<false> {
    const parsed = parse(await this.#dummy);
    // Cannot happen: the dummy is this hasher's own hash.
    if (!parsed) throw new Error("the dummy password hash does not parse");
    await derive(password, parsed.salt, parsed.params);
    return false;
  }

  /** True when the stored hash was made with other parameters than the current ones. */
  needsRehash(hash: string): boolean {
    const parsed = parse(hash);
    if (!parsed) return true;
    const a = parsed.params;
    const b = this.params;
    return (
      a.memoryKiB !== b.memoryKiB ||
      a.passes !== b.passes ||
      a.parallelism !== b.parallelism ||
      a.tagLength !== b.tagLength
    );
  }
}

/** A random password for generated accounts: 24 characters of base64url (144 bits). */
export function generatePassword(): string {
  return randomBytes(18).toString("base64url");
}
