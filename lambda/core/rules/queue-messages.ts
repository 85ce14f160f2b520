/**
 * Queue messages as SQS carries them (DESIGN.md section 6): one SQS message per published message
 * per queue, its body the JSON of the published message. Pure.
 */
import type { PublishedMessage } from './message';

/** SQS's largest message body (the queue's MaximumMessageSize). */
export const SQS_BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * JSON text in ASCII only: every character from U+007F up is written as a `\uXXXX` escape. SQS
 * accepts only some Unicode in a body, and SQS-compatible engines disagree on which (fauxqs 2.4
 * refuses characters outside the Basic Multilingual Plane that AWS accepts); ASCII JSON is valid
 * everywhere and parses back to the same value.
 * @example sqsJson({ p: 'é😀' }) // '{"p":"\\u00e9\\ud83d\\ude00"}'
 */
export const sqsJson = (value: unknown): string =>
  JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/**
 * The SQS body of a message. Escaping can grow a 256 KiB payload up to six times (a control or
 * non-ASCII character becomes `\u00XX`); a body that would then pass SQS's 1 MiB carries its
 * payload as base64 instead (at most 4/3 of 256 KiB), so every valid message fits.
 * @example decodeQueueBody(encodeQueueBody(m)) // deep-equals m
 */
export function encodeQueueBody(m: PublishedMessage, limit = SQS_BODY_LIMIT_BYTES): string {
  const body = sqsJson(m);
  if (body.length <= limit) return body;
  const { payload, ...rest } = m;
  return sqsJson({ ...rest, payload_b64: Buffer.from(payload, 'utf8').toString('base64') });
}

/** The message an SQS body carries; undefined for a body that is not one of ours. */
export function decodeQueueBody(body: string): PublishedMessage | undefined {
  try {
    const m = JSON.parse(body) as PublishedMessage & { payload_b64?: string };
    if (!m || typeof m !== 'object' || typeof m.message_id !== 'string' || typeof m.published_at !== 'number') return undefined;
    if (typeof m.payload_b64 === 'string') {
      const { payload_b64, ...rest } = m;
      return { ...rest, payload: Buffer.from(payload_b64, 'base64').toString('utf8') };
    }
    return typeof m.payload === 'string' ? m : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a message published at `publishedAt` is past a TTL of `ttlSeconds` at `now`. */
export const isPastTtl = (publishedAt: number, ttlSeconds: number, now: number) => publishedAt + ttlSeconds * 1000 <= now;
