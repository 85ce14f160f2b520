/**
 * How much of a Lambda response a consume may fill. A synchronous Lambda response is capped at
 * 6 MB (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html), and with the
 * API Gateway proxy integration the envelope JSON travels as the string `body` inside the
 * function's JSON result: every message is JSON-escaped twice. A payload of quotes or control
 * characters grows up to 7-fold (`\u0001` → `\\u0001`), so the budget counts each message as it
 * will be sent, not its payload length. Pure.
 */

/**
 * Bytes a consume's messages may take in the response, escaped twice: 5 MiB leaves the rest of the
 * 6 MB for the envelope, headers and the proxy result's own fields.
 */
export const MAX_RESPONSE_MESSAGE_BYTES = 5 * 1024 * 1024;

/**
 * The bytes `value` adds to a proxy integration response: its JSON, escaped again as part of the
 * `body` string (less the two quotes the second encoding adds around the whole body).
 * @example responseBytes('a"b') // 10
 */
export function responseBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(JSON.stringify(value)), 'utf8') - 2;
}

/**
 * Counts what a consume puts in its response. The first value always fits (one message of 256 KiB
 * escaped twice is under 2 MB); every later one only while the total stays within the budget.
 */
export class ResponseBudget {
  private used = 0;
  private taken = 0;
  constructor(private readonly budget = MAX_RESPONSE_MESSAGE_BYTES) {}

  /** Bytes still free (a consume sizes its next read by it). */
  get left(): number {
    return this.budget - this.used;
  }

  /** Whether `value` still fits; counts it when it does (`bytes`: its {@link responseBytes}, when known). */
  take(value: unknown, bytes = responseBytes(value)): boolean {
    const b = bytes + 1; // and the comma between array elements
    if (this.taken > 0 && this.used + b > this.budget) return false;
    this.used += b;
    this.taken++;
    return true;
  }
}

/**
 * A list page (`GET /queues`, `/streams`, `/subscriptions`, `/webhooks`) that fits Lambda's
 * response limit: the items in order while they fit {@link MAX_RESPONSE_MESSAGE_BYTES} (the
 * first always), and `limit` echoed as the number of items the page holds when it had to stop
 * early, so a client that pages with `offset + limit` misses nothing. A hundred webhooks with
 * large templates, headers and certificates once made a page of about 12 MB, which Lambda cannot
 * return (API Gateway answers 502).
 * @example listPage('queues', items, 250, 100, 0) // { queues: items (maybe fewer), total: 250, limit: 100 or fewer, offset: 0 }
 */
export function listPage<K extends string, T>(key: K, items: T[], total: number, limit: number, offset: number, budget = MAX_RESPONSE_MESSAGE_BYTES) {
  const b = new ResponseBudget(budget);
  let n = 0;
  while (n < items.length && b.take(items[n])) n++;
  const cut = n < items.length;
  return { [key]: cut ? items.slice(0, n) : items, total, limit: cut ? n : limit, offset } as { [k in K]: T[] } & { total: number; limit: number; offset: number };
}
