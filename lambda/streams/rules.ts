/**
 * Stream rules (SPEC.md "Streams", DESIGN.md sections 7 and 13): request schemas with the settled
 * ranges and defaults, partition choice and start-offset resolution. Pure.
 */
import { topicFilterField } from '../queues/rules/queues';
import { intIn, resourceName } from '../core/rules/validation';
import * as z from 'zod/mini';

const STREAM_DEFAULTS = { retention_days: 7, max_size_gb: 10, partition_count: 1 } as const;
const STREAM_CONSUME_DEFAULTS = { max_messages: 100, timeout_seconds: 30 } as const;
export const MAX_PARTITIONS = 64;

export const createStreamSchema = z.object({
  name: resourceName(),
  topic_filter: topicFilterField(),
  retention_days: z._default(intIn(1, 365), STREAM_DEFAULTS.retention_days),
  max_size_gb: z._default(intIn(1, 1024), STREAM_DEFAULTS.max_size_gb),
  partition_count: z._default(intIn(1, MAX_PARTITIONS), STREAM_DEFAULTS.partition_count),
});

/** `earliest`, `latest`, or an offset given as a number or a string of digits. */
export type StartOffset = 'earliest' | 'latest' | number;

// A number or a string is the right type (else 400); which number or word is a value rule (422).
const startOffsetField = () =>
  z.pipe(
    z.union([z.number(), z.string()]),
    z.transform((v, ctx): StartOffset => {
      if (v === 'earliest' || v === 'latest') return v;
      const n = typeof v === 'number' ? v : /^\d{1,15}$/.test(v) ? Number(v) : NaN;
      if (Number.isSafeInteger(n) && n >= 0) return n;
      ctx.issues.push({ code: 'custom', message: 'must be "earliest", "latest" or a non-negative integer offset', input: v });
      return z.NEVER;
    }),
  );

export const streamConsumeSchema = z.object({
  consumer_group: resourceName(),
  start_offset: z.optional(startOffsetField()),
  max_messages: z._default(intIn(1, 1000), STREAM_CONSUME_DEFAULTS.max_messages),
  timeout_seconds: z._default(intIn(0, 30), STREAM_CONSUME_DEFAULTS.timeout_seconds),
  partition: z.optional(intIn(0, MAX_PARTITIONS - 1)),
});

export const commitSchema = z.object({
  consumer_group: resourceName(),
  offset: z.int().check(z.minimum(0)),
  partition: z.optional(intIn(0, MAX_PARTITIONS - 1)),
});

/**
 * 32-bit FNV-1a of the UTF-8 bytes of `s`: stable across processes and releases, so a key maps
 * to the same partition forever (http://www.isthe.com/chongo/tech/comp/fnv/).
 * @example fnv1a32('a') // 0xe40c292c
 */
export function fnv1a32(s: string): number {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(s, 'utf8')) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/**
 * The partition of a message: the key's hash mod `partitionCount`, or `roundRobin` mod
 * `partitionCount` for a message without a key.
 * @example partitionFor('order-17', 3, 0) // always the same partition for 'order-17'
 */
export function partitionFor(partitionKey: string | undefined, partitionCount: number, roundRobin: number): number {
  if (partitionCount <= 1) return 0;
  if (partitionKey !== undefined) return fnv1a32(partitionKey) % partitionCount;
  return ((roundRobin % partitionCount) + partitionCount) % partitionCount;
}

/**
 * Where a consume starts: the explicit `start_offset`, else the group's committed offset, else
 * `earliest`; never below the oldest retained offset (older messages are gone).
 * @example resolveStart(undefined, 7, { earliest: 2, latest: 9 }) // 7
 */
export function resolveStart(start: StartOffset | undefined, committed: number | undefined, bounds: { earliest: number; latest: number }): number {
  const wanted = start === 'earliest' ? bounds.earliest : start === 'latest' ? bounds.latest : (start ?? committed ?? bounds.earliest);
  return Math.max(wanted, bounds.earliest);
}
