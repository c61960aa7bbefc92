// Wire shape of a session's idle rule as it stands now (docs/dev/idle-and-limits.md).
import { z } from "zod";

const Timestamp = z.iso.datetime();
const SignalState = z.object({
  state: z.enum(["known", "unknown", "none"]).meta({
    description:
      "unknown: no recent report, and the idle rule is suspended; none: does not apply (no notebook server).",
  }),
  last_active_at: Timestamp.nullable().meta({ description: "The latest activity in this run period." }),
  why: z.string().nullable().meta({ description: "Why it is unknown.", example: "no GPU utilisation reading" }),
});

export const SessionIdle = z
  .object({
    state: z.enum(["counting", "warned", "suspended", "off", "not_running"]).meta({
      description:
        "counting: idle time is counted; warned: a warning is out; suspended: a signal is unknown, so the session is never paused for idleness (the time limit still applies); off: the policy turns idle pausing off; not_running.",
    }),
    idle_timeout_minutes: z.number().int(),
    max_runtime_minutes: z.number().int(),
    since: Timestamp.nullable().meta({ description: "Idle since (while counting or warned)." }),
    deadline: Timestamp.nullable().meta({ description: "When it pauses unless used (while counting or warned)." }),
    runtime_deadline: Timestamp.nullable().meta({ description: "When the time limit pauses it." }),
    signals: z.object({ gpu: SignalState, traffic: SignalState, notebook: SignalState }),
    missing: z
      .array(z.enum(["gpu", "traffic", "notebook"]))
      .meta({ description: "The signals that keep the idle rule suspended." }),
    keep_running: z.object({ used: z.number().int(), max: z.number().int() }),
  })
  .meta({ id: "SessionIdle" });
export type SessionIdle = z.infer<typeof SessionIdle>;
