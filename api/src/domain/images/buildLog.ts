// A build's log as it grows: the lines stored after a position, then, once the build has finished and
// every line was read, how it ended. Read from Postgres (the worker stores the lines as the operator
// reports them), every half second while the build runs.
import { listBuildLogsAfter } from "../../db/operations/images/buildLogs.ts";
import { findBuild } from "../../db/operations/images/findBuild.ts";
import { findPrivateImage } from "../../db/operations/images/findPrivateImage.ts";
import type { Deps } from "../../deps.ts";

const FINISHED = new Set(["succeeded", "failed", "cancelled"]);
const POLL_MS = 500;
const HEARTBEAT_MS = 15_000;
const PAGE = 200;

export type BuildLogEvent =
  | { kind: "log"; seq: string; text: string }
  | { kind: "end"; state: string; failureReason: string | null; imageState: string | null }
  | { kind: "heartbeat"; at: Date };

/** Follows the log after `after` until the build ends or `stopped()` (the reader left) says so. */
export async function* followBuildLog(
  deps: Pick<Deps, "db">,
  buildId: string,
  after: string,
  stopped: () => boolean,
): AsyncGenerator<BuildLogEvent> {
  let beat = Date.now();
  while (!stopped()) {
    // Read the state first: a build seen finished has stored its last line already.
    const build = await findBuild(deps.db, buildId);
    for (;;) {
      const rows = await listBuildLogsAfter(deps.db, buildId, after);
      for (const r of rows) yield { kind: "log", seq: String(r.seq), text: r.text };
      if (rows.length > 0) after = String(rows[rows.length - 1]?.seq ?? after);
      if (rows.length < PAGE) break;
    }
    if (!build || FINISHED.has(build.state)) {
      const image = build ? await findPrivateImage(deps.db, build.image_id) : undefined;
      yield {
        kind: "end",
        state: build?.state ?? "cancelled",
        failureReason: build?.failure_reason ?? null,
        imageState: image?.state ?? null,
      };
      return;
    }
    if (Date.now() - beat > HEARTBEAT_MS) {
      yield { kind: "heartbeat", at: new Date() };
      beat = Date.now();
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
