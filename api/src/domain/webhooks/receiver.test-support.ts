// A webhook receiver for tests: HTTPS on loopback with a throwaway self-signed certificate (made with the
// openssl binary), recording every request; `answer` decides each response (status, delay, or hang).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  headers: Record<string, string>;
  body: string;
  at: number;
}

export type Answer = { status: number; body?: string; headers?: Record<string, string> } | "hang";

export interface Receiver {
  url: string;
  /** PEM of the certificate (the dispatcher's `ca`). */
  ca: string;
  received: Received[];
  answer: (r: Received, n: number) => Answer;
  /** Resolves when `pred` holds over the received list (polls every 20 ms). */
  until(pred: (rs: Received[]) => boolean, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export function selfSigned(): { cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), "berth-hook-cert-"));
  try {
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
        "-days",
        "2",
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:hooks.example.test",
      ],
      { stdio: "ignore" },
    );
    return { cert: readFileSync(join(dir, "cert.pem"), "utf8"), key: readFileSync(join(dir, "key.pem"), "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function startReceiver(path = "/hooks"): Promise<Receiver> {
  const { cert, key } = selfSigned();
  const hanging = new Set<ServerResponse>();
  const r: Receiver = {
    url: "",
    ca: cert,
    received: [],
    answer: () => ({ status: 204 }),
    async until(pred, timeoutMs = 20_000) {
      const end = Date.now() + timeoutMs;
      while (!pred(r.received)) {
        if (Date.now() > end)
          throw new Error(`receiver: condition not met in ${timeoutMs} ms (${r.received.length} received)`);
        await new Promise((res) => setTimeout(res, 20));
      }
    },
    stop: async () => {
      for (const res of hanging) res.destroy();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
  const server: Server = createServer({ cert, key }, (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const h = req.headers as Record<string, string>;
      const got: Received = {
        id: h["webhook-id"] ?? "",
        timestamp: h["webhook-timestamp"] ?? "",
        signature: h["webhook-signature"] ?? "",
        headers: h,
        body: Buffer.concat(chunks).toString("utf8"),
        at: Date.now(),
      };
      r.received.push(got);
      const a = r.answer(got, r.received.length);
      if (a === "hang") {
        hanging.add(res);
        res.on("close", () => hanging.delete(res));
        return;
      }
      res.writeHead(a.status, a.headers ?? {});
      res.end(a.body ?? "");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  r.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return r;
}
