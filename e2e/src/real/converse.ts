// A WebSocket conversation through a session gateway, as the real-session journeys and the install's test
// hold one: open with the session's cookie, send, collect text frames until `done`, or fail at the deadline
// with what came (a refused upgrade names its status and the gateway that answered).
import WebSocket from "ws";

export function converse(
  url: URL,
  options: { cookie: string; ca?: string },
  send: (ws: WebSocket) => void,
  done: (all: string[]) => boolean,
  ms = 60_000,
): Promise<string[]> {
  return new Promise<string[]>((resolve, reject) => {
    const ws = new WebSocket(url.toString().replace(/^http/, "ws"), {
      ...(options.ca ? { ca: options.ca } : {}),
      headers: { cookie: options.cookie, origin: url.origin },
    });
    const got: string[] = [];
    const timer = setTimeout(() => {
      ws.close();
      reject(new Error(`no answer on ${url} within ${ms} ms; got ${JSON.stringify(got).slice(-2000)}`));
    }, ms);
    ws.once("open", () => send(ws));
    ws.once("unexpected-response", (_q, res) => {
      clearTimeout(timer);
      reject(new Error(`WebSocket ${url} answered ${res.statusCode} ${res.headers["x-berth-gateway"] ?? ""}`.trim()));
    });
    ws.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    ws.on("message", (d) => {
      got.push(String(d));
      if (done(got)) {
        clearTimeout(timer);
        ws.close();
        resolve(got);
      }
    });
  });
}
