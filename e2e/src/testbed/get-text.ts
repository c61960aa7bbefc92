// The bed's readiness probe: one GET's body, over TLS trusting only the bed's CA when given.
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";

/** The body of a GET, over TLS trusting only `ca` when given; fails after 2 s. */
export function getText(url: string, ca?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const onResponse = (res: IncomingMessage) => {
      let text = "";
      res.on("data", (c: Buffer) => {
        text += c.toString();
      });
      res.on("end", () => resolve(text));
      // A reply cut mid-body (the socket timeout below, a dying apiserver) ends in neither "end" nor a
      // request error: without these the wait for a cluster hung instead of asking again.
      res.on("error", reject);
      res.on("close", () => {
        if (!res.complete) reject(new Error(`the reply from ${url} was cut off`));
      });
    };
    const req =
      ca === undefined
        ? httpRequest(url, { timeout: 2000 }, onResponse)
        : httpsRequest(url, { timeout: 2000, ca, agent: false }, onResponse);
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
    req.end();
  });
}
