// What a person sees when the gateway does not proxy: a small, self-contained HTML page (no scripts, no
// external assets) that says what happened and what to do. Status codes stay meaningful for machines.

export interface Page {
  status: number;
  title: string;
  message: string;
  hint?: string;
  /** Stable identifier for tests and support: data-reason on <main>. */
  reason: string;
}

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function renderPage(p: Page): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>${esc(p.title)} · Berth</title>
<style>body{font:16px/1.5 system-ui,sans-serif;margin:0;display:grid;place-items:center;min-height:100vh;background:#f6f7f9;color:#1d2330}
main{max-width:34rem;padding:2rem;background:#fff;border-radius:12px;box-shadow:0 1px 4px #0002}h1{font-size:1.3rem;margin:0 0 .5rem}
p{margin:.5rem 0}.hint{color:#4a5468}.code{color:#8a93a6;font-size:.8rem}</style></head>
<body><main data-testid="gateway-page" data-reason="${esc(p.reason)}"><h1>${esc(p.title)}</h1><p>${esc(p.message)}</p>${
    p.hint ? `<p class="hint">${esc(p.hint)}</p>` : ""
  }<p class="code">${p.status} · ${esc(p.reason)}</p></main></body></html>
`;
}

const REOPEN = "Open the session again from the Berth console to get a fresh link.";

export const pages = {
  notSignedIn: (): Page => ({
    status: 401,
    reason: "no_cookie",
    title: "Open this session from the console",
    message: "This address needs a connect link from Berth; it cannot be opened directly.",
    hint: REOPEN,
  }),
  cannotVerify: (): Page => ({
    status: 401,
    reason: "verification_unavailable",
    title: "Cannot check your link right now",
    message: "The session gateway could not reach Berth to verify your connect link, so it cannot let you in.",
    hint: "Try again in a moment. If it keeps happening, tell your administrator.",
  }),
  refused: (reason: string, message: string): Page => {
    const titles: Record<string, string> = {
      token_used: "This link has already been used",
      token_expired: "This link has expired",
      token_unknown: "This link is not valid",
      token_invalid: "This link is not valid",
      other_session: "This link is for another session",
      other_cluster: "This link is for another cluster",
      session_moved: "This session has moved",
      not_allowed: "You may not use this session",
    };
    return {
      status: 403,
      reason,
      title: titles[reason] ?? "Access refused",
      message: message || "The link was refused.",
      hint: REOPEN,
    };
  },
  notRunning: (phase: string | undefined): Page => {
    const paused = phase === "Paused" || phase === "Pausing";
    return {
      status: 409,
      reason: paused ? "session_paused" : "session_not_running",
      title: paused ? "This session is paused" : `This session is not running${phase ? ` (${phase})` : ""}`,
      message: paused
        ? "Its GPU has been returned and nothing is billed while it is paused."
        : "It cannot be opened until it runs again.",
      hint: paused ? "Resume it from the Berth console, then open it again." : "Check its state in the Berth console.",
    };
  },
  gone: (): Page => ({
    status: 404,
    reason: "session_gone",
    title: "This session no longer exists",
    message: "It was terminated or removed.",
    hint: "Start a new session from the Berth console.",
  }),
  unreachable: (): Page => ({
    status: 502,
    reason: "upstream_unreachable",
    title: "The session is not answering",
    message: "The session runs, but its application did not answer. It may still be starting.",
    hint: "Wait a moment and reload this page.",
  }),
  notFound: (): Page => ({
    status: 404,
    reason: "not_a_session_path",
    title: "Nothing here",
    message: "Session addresses look like /proxy/<session>/lab, /terminal or /code/.",
  }),
  badRequest: (message: string): Page => ({ status: 400, reason: "bad_request", title: "Bad request", message }),
};
