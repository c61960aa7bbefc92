// Request body reading for routes that declare a body: JSON only, size-limited while streaming (a lying
// or absent Content-Length cannot get past the limit), errors as domain errors.
import type { Context } from "koa";
import { DomainError } from "../errors.ts";

const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i;

export class PayloadTooLarge extends DomainError {
  constructor(limitBytes: number) {
    super("payload_too_large", `the request body is larger than ${limitBytes} bytes`, { limit_bytes: limitBytes });
  }
}

function hasBody(ctx: Context): boolean {
  const len = ctx.get("Content-Length");
  if (len !== "") return Number(len) > 0;
  return ctx.get("Transfer-Encoding") !== "";
}

/**
 * Reads and parses a JSON body. No body at all gives `undefined` (the route's schema decides whether
 * that is acceptable); a body that is not JSON-typed is 415; over the limit is 413; unparsable is 400.
 */
export async function readJsonBody(ctx: Context, limitBytes: number): Promise<unknown> {
  if (!hasBody(ctx)) return undefined;
  const type = ctx.get("Content-Type");
  if (!JSON_TYPE.test(type)) {
    throw new DomainError("unsupported_media_type", "the request body must be application/json", {
      content_type: type || null,
    });
  }
  const declared = Number(ctx.get("Content-Length") || "0");
  if (declared > limitBytes) throw new PayloadTooLarge(limitBytes);

  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limitBytes) {
      // Stop reading; the envelope middleware answers with Connection: close.
      ctx.req.pause();
      throw new PayloadTooLarge(limitBytes);
    }
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new DomainError("malformed_json", "the request body is not valid JSON", { reason: (err as Error).message });
  }
}
