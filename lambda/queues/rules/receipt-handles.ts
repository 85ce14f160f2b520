/**
 * Receipt handles (DESIGN.md section 6). A handle is the service's own token around SQS's: it
 * names the queue incarnation, the message and the delivery (with when its visibility ends),
 * carries the SQS receipt handle and the message's size (so an ack releases the queue's byte
 * counter without reading the message), and is signed with the deployment's key (HMAC-SHA256),
 * so a client cannot alter any of it. Pure: the key comes from the caller.
 *
 * How an ack is judged:
 * - unreadable, or naming another message, another queue or an earlier incarnation of this one:
 *   404 MESSAGE_NOT_FOUND (the handle says nothing about this message);
 * - naming this message but with a signature that does not match (altered), or whose delivery's
 *   visibility has ended (superseded by a later receive, or about to be): 409
 *   INVALID_RECEIPT_HANDLE, and the message is kept;
 * - else the delivery is current; the ack record then decides between one success and 404 for a
 *   repeated or concurrent ack (lambda/queues/ack.ts).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** What a handle says about one delivery of one message. */
export interface Delivery {
  /** Queue incarnation (the queue's internal id). */
  q: string;
  /** Message id. */
  m: string;
  /** Epoch ms at which this delivery's visibility timeout ends. */
  u: number;
  /** Payload bytes of the message (the queue's byte counter). */
  s: number;
  /** SQS receipt handle of this receive. */
  h: string;
  /** Epoch ms the message was published (its expiry bucket in the queue's counters); absent in handles made before. */
  p?: number;
  /**
   * Epoch ms until which this delivery's visibility surely lasts: the receive's request time plus
   * the visibility (SQS cannot deliver before it is asked). `u` counts from an estimate of the
   * delivery that a slow answer can make too late; between the two an ack first makes sure the
   * delivery is still current (lambda/queues/ack.ts). Absent in handles made before: never sure.
   */
  e?: number;
}

const VERSION = '1';

const mac = (key: Buffer, payload: string) => createHmac('sha256', key).update(`${VERSION}.${payload}`).digest();

/**
 * The token of a delivery: `1.<base64url JSON>.<base64url HMAC>`.
 * @example signHandle({ q: 'Q1', m: 'M1', u: 1767225600000, s: 5, h: 'AQEB...' }, key)
 */
export function signHandle(d: Delivery, key: Buffer): string {
  const payload = Buffer.from(JSON.stringify(d), 'utf8').toString('base64url');
  return `${VERSION}.${payload}.${mac(key, payload).toString('base64url')}`;
}

/** The delivery a token names, without checking its signature; undefined when unreadable. */
export function readHandle(token: string): { delivery: Delivery; payload: string; signature: string } | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== VERSION) return undefined;
  try {
    const d = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as Delivery;
    const valid =
      d && typeof d === 'object' && typeof d.q === 'string' && typeof d.m === 'string' && typeof d.h === 'string' && Number.isFinite(d.u) && Number.isFinite(d.s);
    return valid ? { delivery: d, payload: parts[1], signature: parts[2] } : undefined;
  } catch {
    return undefined;
  }
}

export type HandleVerdict =
  | { verdict: 'current'; delivery: Delivery }
  /** 404: the handle does not name this queue's message. */
  | { verdict: 'other' }
  /** 409: this message's handle, but altered or no longer current. */
  | { verdict: 'stale'; why: 'altered' | 'expired' }
  /**
   * 404: this message's handle, no longer current, and the message's TTL (from its publish, `p`)
   * has ended: no consume returns it again, so it is gone (DESIGN.md section 13), whether or not a
   * consume has met it since.
   */
  | { verdict: 'gone' };

/**
 * Judges `token` as a handle of message `messageId` of queue incarnation `queueId` at `now`.
 * @example judgeHandle(token, { queueId: 'Q1', messageId: 'M1', now: Date.now(), key }).verdict // 'current'
 */
export function judgeHandle(token: string, o: { queueId: string; messageId: string; now: number; key: Buffer; ttlMs?: number }): HandleVerdict {
  const read = readHandle(token);
  if (!read || read.delivery.q !== o.queueId || read.delivery.m !== o.messageId) return { verdict: 'other' };
  const expected = mac(o.key, read.payload);
  const given = Buffer.from(read.signature, 'base64url');
  // base64url decoding ignores characters outside its alphabet: compare the canonical form too.
  if (given.length !== expected.length || !timingSafeEqual(given, expected) || given.toString('base64url') !== read.signature) {
    return { verdict: 'stale', why: 'altered' };
  }
  if (o.now >= read.delivery.u) {
    const p = read.delivery.p;
    return o.ttlMs !== undefined && p !== undefined && o.now >= p + o.ttlMs ? { verdict: 'gone' } : { verdict: 'stale', why: 'expired' };
  }
  return { verdict: 'current', delivery: read.delivery };
}
