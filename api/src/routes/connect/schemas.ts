import { z } from "zod";

const Timestamp = z.string().meta({ description: "RFC 3339, UTC." });

export const SessionParams = z.object({
  sessionId: z
    .string()
    .min(1)
    .max(128)
    .regex(/^[A-Za-z0-9_-]+$/, "a session id"),
});

const Link = z
  .url()
  .meta({ description: "Open in a browser within the token's life; the token in svc_cnx works once." });

export const ConnectLinks = z
  .object({
    session_id: z.string(),
    cluster_id: z.string(),
    session_domain: z
      .string()
      .meta({ description: "The host of the session's cluster's gateway; every link is on it." }),
    links: z.object({
      lab: Link.meta({ example: "https://gpu-a.sessions.example.com/proxy/s-4f2a/lab?svc_cnx=cnx_…" }),
      terminal: Link,
      code: Link,
    }),
    expires_at: Timestamp.meta({
      description: "The tokens in these links are refused after this (at most 60 s after issue).",
    }),
  })
  .meta({ id: "ConnectLinks" });

/** GET /internal/connect/verify: redeem (with X-Berth-Connect-Token) or check (with session and user). */
export const VerifyQuery = z
  .object({
    cr: z.string().regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, "the session's resource name from /proxy/{cr}/"),
    session: z.string().min(1).max(128).optional(),
    user: z.string().min(1).max(128).optional(),
  })
  .refine((q) => (q.session === undefined) === (q.user === undefined), {
    message: "session and user go together (check mode)",
  });

export const VerifyAnswer = z.object({
  session_id: z.string(),
  cr: z.string(),
  cluster_id: z.string(),
  user_id: z.string(),
  phase: z.string(),
});
