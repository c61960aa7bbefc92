// Answers that are not one JSON body: CSV exports, server-sent events and a followed text stream. A
// handler returns one of these and the route layer (route.ts) writes it on the raw response, so no
// handler touches `ctx.res` (scripts/boundaries.test.ts keeps it so). The layer waits for the answer to
// be written before it writes the audit row, so what the stream records (rows sent, a client that left)
// is in it.
import type { ServerResponse } from "node:http";
import type { Readable } from "node:stream";
import type { Context } from "koa";

/** A CSV file (RFC 4180) sent as an attachment; `body` may come in chunks as rows are read. */
export interface CsvAnswer {
  kind: "csv";
  filename: string;
  /** Says `header=present` in the media type (the first line names the columns). */
  headerPresent?: boolean;
  /** Stops being read when the client goes away (the iterator's `finally` runs). */
  body: string | AsyncIterable<string>;
}

/** What a server-sent events answer writes with. */
export interface EventStreamOut {
  /** Raw event text (`id:`, `event:`, `data:` lines and the blank line). Nothing once closed. */
  write(text: string): void;
  /** Written but not yet taken by the client. */
  readonly buffered: number;
  /** The client went away, or the stream was ended or dropped. */
  readonly closed: boolean;
  /** Resolves when the client goes away (or the stream ends). */
  readonly gone: Promise<void>;
  /** Ends the stream. */
  end(): void;
  /** Cuts off a client that does not read (it resumes with Last-Event-ID). */
  drop(): void;
}

/** `text/event-stream`: `retry: 2000` is sent first, then whatever `run` writes until it resolves. */
export interface EventStreamAnswer {
  kind: "sse";
  run(out: EventStreamOut): Promise<void>;
}

/** A text stream passed on as it comes (a followed log), until it ends or the client goes away. */
export interface TextStreamAnswer {
  kind: "text";
  body: Readable;
}

export type StreamAnswer = CsvAnswer | EventStreamAnswer | TextStreamAnswer;

export function isStreamAnswer(x: unknown): x is StreamAnswer {
  return typeof x === "object" && x !== null && "kind" in x;
}

const drained = (res: ServerResponse) =>
  new Promise<void>((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.once("drain", done);
    res.once("close", done);
  });

/** Writes `answer` on the raw response (Koa steps aside); resolves once it is written or the client left. */
export async function writeStreamAnswer(ctx: Context, answer: StreamAnswer): Promise<void> {
  ctx.respond = false;
  const res = ctx.res;
  const requestId = String(ctx.response.get("X-Request-Id") || "");
  if (answer.kind === "csv") {
    res.writeHead(200, {
      "Content-Type": `text/csv; charset=utf-8${answer.headerPresent ? "; header=present" : ""}`,
      "Content-Disposition": `attachment; filename="${answer.filename}"`,
      "Cache-Control": "no-store",
      "X-Request-Id": requestId,
    });
    if (typeof answer.body === "string") {
      res.end(answer.body);
      return;
    }
    let left = false;
    res.on("close", () => {
      left = true;
    });
    try {
      for await (const chunk of answer.body) {
        if (left || res.writableEnded) break;
        if (!res.write(chunk)) await drained(res);
      }
    } catch (e) {
      // Rows already went out with a 200: the client must see a cut-off answer, not a complete file.
      res.destroy();
      throw e;
    }
    if (!res.writableEnded) res.end();
    return;
  }
  if (answer.kind === "sse") {
    res.writeHead(200, {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-store",
      Connection: "keep-alive",
      "X-Accel-Buffering": "no",
      "X-Request-Id": requestId,
    });
    res.flushHeaders();
    let closed = false;
    let left: () => void = () => {};
    const gone = new Promise<void>((r) => {
      left = r;
    });
    const close = () => {
      closed = true;
      left();
    };
    ctx.req.on("close", close);
    res.on("close", close);
    const out: EventStreamOut = {
      write: (text) => {
        if (!closed) res.write(text);
      },
      get buffered() {
        return res.writableLength;
      },
      get closed() {
        return closed;
      },
      gone,
      end: () => {
        res.end();
        close();
      },
      drop: () => {
        res.destroy();
        close();
      },
    };
    out.write("retry: 2000\n\n");
    try {
      await answer.run(out);
    } finally {
      if (!res.writableEnded) res.end();
    }
    return;
  }
  res.writeHead(200, {
    "content-type": "text/plain; charset=utf-8",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "x-accel-buffering": "no",
    "x-request-id": requestId,
  });
  res.flushHeaders();
  const body = answer.body;
  await new Promise<void>((resolve) => {
    body.on("data", (c: Buffer) => res.write(c));
    body.on("end", resolve);
    body.on("error", resolve);
    body.on("close", resolve);
    res.on("close", () => {
      body.destroy(); // the client left: so does the source's connection
      resolve();
    });
  });
  res.end();
}
