import { z } from "zod";

const bool = z
  .enum(["true", "false", "1", "0"])
  .transform((v) => v === "true" || v === "1")
  .default(false);

export const LogsQuery = z.object({
  tail: z.coerce
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(200)
    .meta({ description: "How many of the last lines to answer (or to start a follow with)." }),
  follow: bool.meta({
    description: "Keep the answer open and stream new lines as text/plain until the pod ends or the client leaves.",
  }),
  timestamps: bool.meta({ description: "Prefix each line with its RFC 3339 timestamp, as kubectl logs --timestamps." }),
});

export const SessionLogs = z
  .object({
    session_id: z.string(),
    cluster_id: z.string(),
    pod: z.string(),
    lines: z.array(z.string()),
    truncated: z.boolean().meta({ description: "True when the log was cut at the size limit (1 MiB)." }),
  })
  .meta({ id: "SessionLogs" });
