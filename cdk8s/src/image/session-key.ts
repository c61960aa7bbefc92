// What a session image is cached under (session-base.ts, sessions.ts): a hash of its inputs and of the
// builder's own code, by the text of the functions that make it.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = fileURLToPath(new URL(".", import.meta.url));
/** Where the builder's functions are written, for `code` to find them by name. */
const BUILDER = ["sessions.ts", "session-base.ts", "session-recipes.ts", "session-steps.ts", "build.ts"];

export const cacheRoot = (env: NodeJS.ProcessEnv = process.env) =>
  env.BERTH_IMAGE_CACHE ?? join(homedir(), ".cache/berth/images");

export const hash = (...parts: (string | Buffer)[]) => {
  const h = createHash("sha256");
  for (const p of parts) h.update(p).update("\0");
  return h.digest("hex");
};
/**
 * The builder's code that makes a layer, by the names of its top-level functions: their source text as
 * written (not `Function.toString()`, which differs between Node's type stripping and a test runner's
 * transform). A change to them is a new image; an edit elsewhere is not.
 */
export const code = (...fns: { name: string }[]) => {
  const files = BUILDER.map((f) => join(HERE, f)).map((f) => readFileSync(f, "utf8"));
  return hash(
    ...fns.map(({ name }) => {
      const re = new RegExp(`^(?:export )?(?:function ${name}\\(|const ${name} = )[\\s\\S]*?^}`, "m");
      const found = files.map((f) => re.exec(f)?.[0]).find(Boolean);
      if (!found) throw new Error(`the builder has no top-level ${name}`);
      return found;
    }),
  );
};
