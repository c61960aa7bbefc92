// Charging right after ingestion, off the request's path: POST /internal/v1/usage stores the samples,
// answers, and asks for a billing pass here. Passes are coalesced per process (one running, at most one
// queued), so a burst of batches costs a few passes, not one each. A pass that fails, or a process that
// dies before its pass, leaves the samples unbilled: the worker's sweep (api/src/worker/billingLoop.ts) bills them.
import { billPendingUsage } from "./charge.ts";
import type { CreditsContext } from "./context.ts";

export function billSoon(b: CreditsContext): void {
  const st = b.pass;
  if (st.running) {
    st.again = true;
    return;
  }
  st.running = (async () => {
    do {
      st.again = false;
      try {
        await billPendingUsage(b);
      } catch (err) {
        b.log.warn({ err }, "billing after ingestion failed; the worker's sweep will charge these samples");
        return;
      }
    } while (st.again);
  })().finally(() => {
    st.running = undefined;
  });
}

/** Resolves when no pass is running (tests). */
export async function billingIdle(b: CreditsContext): Promise<void> {
  for (;;) {
    const r = b.pass.running;
    if (!r) return;
    await r;
  }
}
