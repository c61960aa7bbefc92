// A parser for the text/event-stream format (the WHATWG rules that matter here: fields, multi-line data,
// comments, ids, retry), fed chunks as they arrive. Pure, so it is tested without a network.

export interface SseMessage {
  event: string;
  data: string;
  id: string | undefined;
}

export class SseParser {
  #buf = "";
  #event = "";
  #data: string[] = [];
  #id: string | undefined;
  /** The last id seen (sent back as Last-Event-ID when reconnecting). */
  lastEventId: string | undefined;
  /** The server's retry hint in ms, when it sent one. */
  retry: number | undefined;

  push(chunk: string): SseMessage[] {
    this.#buf += chunk;
    const out: SseMessage[] = [];
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.#buf);
      if (!m) break;
      // A lone \r at the very end may be the first half of \r\n: wait for more.
      if (m[0] === "\r" && m.index === this.#buf.length - 1) break;
      const line = this.#buf.slice(0, m.index);
      this.#buf = this.#buf.slice(m.index + m[0].length);
      const msg = this.#line(line);
      if (msg) out.push(msg);
    }
    return out;
  }

  #line(line: string): SseMessage | undefined {
    if (line === "") {
      if (this.#data.length === 0) {
        this.#event = "";
        return undefined;
      }
      const msg: SseMessage = { event: this.#event || "message", data: this.#data.join("\n"), id: this.#id };
      if (this.#id !== undefined) this.lastEventId = this.#id;
      this.#event = "";
      this.#data = [];
      return msg;
    }
    if (line.startsWith(":")) return undefined; // comment (heartbeat)
    const i = line.indexOf(":");
    const field = i < 0 ? line : line.slice(0, i);
    let value = i < 0 ? "" : line.slice(i + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "event":
        this.#event = value;
        break;
      case "data":
        this.#data.push(value);
        break;
      case "id":
        if (!value.includes("\0")) this.#id = value;
        break;
      case "retry":
        if (/^\d+$/.test(value)) this.retry = Number(value);
        break;
    }
    return undefined;
  }
}
