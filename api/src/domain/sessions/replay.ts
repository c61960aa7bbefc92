// What a resumed event stream missed: the events kept after the client's last id, read in pages, and
// the oldest event still kept (older ones are gone after retention, and the client must reload lists).
import { firstSessionEventSeq, listSessionEventsAfter } from "../../db/operations/sessions/sessionEvents.ts";
import type { SessionEventRow } from "../../db/operations/sessions/types.ts";
import type { Deps } from "../../deps.ts";

const PAGE = 500;

/** The oldest kept event's sequence number (0 when none is kept). */
export async function oldestKeptEvent(deps: Pick<Deps, "db">): Promise<bigint> {
  return BigInt(await firstSessionEventSeq(deps.db));
}

/** The events after `after`, a page at a time, until the newest or until `stopped()` says the reader left. */
export async function* eventsAfter(
  deps: Pick<Deps, "db">,
  after: string,
  stopped: () => boolean,
): AsyncGenerator<SessionEventRow[]> {
  for (;;) {
    const rows = await listSessionEventsAfter(deps.db, after, PAGE);
    yield rows;
    if (rows.length < PAGE || stopped()) return;
    after = String(rows[rows.length - 1]?.seq);
  }
}
