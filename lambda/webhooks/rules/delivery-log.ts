/**
 * The webhook delivery log, replay and secret rotation (extensions; docs/webhooks.md): request
 * schemas, the shape of a log entry and its key parts, and the list cursor. Pure.
 *
 * Every attempt of a delivery leaves one entry (no body: the message id, attempt number, time,
 * duration, HTTP status, the `{{.error}}`-style reason and whether it was the last attempt), kept
 * for {@link LOG_RETENTION_SECONDS}. A delivery that ended in failure also keeps its message for
 * the same time, so it can be replayed.
 */
import { createHash } from 'node:crypto';
import { invalidRequest, validationError } from '../../core/rules/errors';
import { intIn } from '../../core/rules/validation';
import * as z from 'zod/mini';

/** Log entries, and the messages of failed deliveries, are kept this long (DynamoDB TTL). */
export const LOG_RETENTION_SECONDS = 7 * 86400;
/** Default and longest grace period of a rotated secret (seconds). */
export const ROTATION_GRACE = { default: 86400, max: 7 * 86400 } as const;
/** Failed deliveries one bulk replay call queues at most (it answers where to continue). */
export const MAX_BULK_REPLAY = 500;
/**
 * The log of one webhook is spread over this many partition keys per outcome (by a hash of the
 * message id), so its writes are not capped by one key's 1,000 write units per second: about
 * 8,000 attempts per second per webhook and outcome. A page reads every shard of the outcomes
 * it lists (8 or 16 Queries).
 */
export const LOG_SHARDS = 8;

export type AttemptOutcome = 'succeeded' | 'failed';
const ATTEMPT_OUTCOMES = ['succeeded', 'failed'] as const;

/** One attempt as stored and as the API shows it (times as epoch ms here, ISO in the answer). */
export interface AttemptEntry {
  message_id: string;
  attempt: number;
  /** Epoch ms the request started. */
  attempted_at: number;
  duration_ms: number;
  /** The receiver's HTTP status; null when there was no answer (timeout, refused, too large). */
  status_code: number | null;
  outcome: AttemptOutcome;
  /** `{{.error}}`-style one-line reason of a failed attempt (`HTTP 500`, `timeout after 10 s`). */
  error: string | null;
  /** No attempt of this delivery follows (it succeeded, or its retries are used up). */
  final: boolean;
  /** The attempt belongs to a replay (POST .../replay), not to the publish. */
  replay: boolean;
  /**
   * The application the message was addressed to (`x-application`); absent for an unaddressed
   * message (and in entries written before 2026-11-29). A portal session lists only its own.
   */
  application?: string;
}

/** Shard of a message in a webhook's log: stable, so all attempts of a message share one. */
export const logShard = (messageId: string) => createHash('sha256').update(messageId).digest().readUInt32BE(0) % LOG_SHARDS;

/**
 * The sort key of an entry in time order: the time (13 digits of epoch ms), then what makes it
 * unique (message, attempt, entry id). String order is time order; a cursor is one of these.
 * @example timeKey(1767225600000, 'M1', 2, 'E1') // '1767225600000#M1#02#E1'
 */
export const timeKey = (atMs: number, messageId: string, attempt: number, entryId: string) =>
  `${String(atMs).padStart(13, '0')}#${messageId}#${String(attempt).padStart(2, '0')}#${entryId}`;

/** The epoch ms a time key starts with. */
export const timeOfKey = (key: string) => Number(key.slice(0, 13));

/** The list cursor: the time key of the last entry of a page, opaque to clients. */
export const encodeCursor = (key: string) => Buffer.from(key, 'utf8').toString('base64url');

export function decodeCursor(cursor: string): string {
  const key = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^\d{13}#[^#]+#\d{2}#[^#]+$/.test(key)) throw invalidRequest('Query parameter "cursor" is not a cursor this API returned.', { fields: [{ field: 'cursor', message: 'is not a valid cursor' }] });
  return key;
}

export interface ListQuery {
  limit: number;
  cursor?: string;
  status?: AttemptOutcome;
  message_id?: string;
}

/**
 * Parses the list's query: `limit` 1..100 (default 50; not an integer 400, out of range 422),
 * `cursor` from a previous page, `status` `failed` or `succeeded` (another value is an unknown
 * query value: 400), `message_id`.
 */
export function parseListQuery(query: Record<string, string | undefined> | null | undefined): ListQuery {
  const q = query ?? {};
  let limit = 50;
  if (q.limit !== undefined) {
    if (!/^-?\d+$/.test(q.limit)) throw invalidRequest('Query parameter "limit" must be an integer.', { fields: [{ field: 'limit', message: 'must be an integer' }] });
    limit = Number(q.limit);
    if (limit < 1 || limit > 100) throw validationError([{ field: 'limit', message: 'must be between 1 and 100' }]);
  }
  if (q.status !== undefined && !(ATTEMPT_OUTCOMES as readonly string[]).includes(q.status)) {
    throw invalidRequest('Query parameter "status" must be failed or succeeded.', { fields: [{ field: 'status', message: 'must be failed or succeeded' }] });
  }
  if (q.message_id !== undefined && !/^[\x21-\x7e]{1,128}$/.test(q.message_id)) {
    throw validationError([{ field: 'message_id', message: 'must be a message id' }]);
  }
  return {
    limit,
    ...(q.cursor !== undefined ? { cursor: decodeCursor(q.cursor) } : {}),
    ...(q.status !== undefined ? { status: q.status as AttemptOutcome } : {}),
    ...(q.message_id !== undefined ? { message_id: q.message_id } : {}),
  };
}

/** An ISO 8601 timestamp (with or without milliseconds, `Z` or an offset). */
const isoTimestamp = () =>
  z.string().check(
    z.superRefine((s, ctx) => {
      if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?(Z|[+-]\d{2}:\d{2})$/.test(s) || Number.isNaN(Date.parse(s))) {
        ctx.addIssue({ code: 'custom', message: 'must be an ISO 8601 timestamp like 2026-11-22T10:00:00.000Z' });
      }
    }),
  );

/** `POST /webhooks/{name}/replay`: failed deliveries since a time (`status` can only be `failed`). */
export const bulkReplaySchema = z.object({
  since: isoTimestamp(),
  status: z._default(z.pipe(z.string(), z.enum(['failed'])), 'failed'),
});

/** `POST /webhooks/{name}/secret/rotate`: how long the old secret keeps signing too. */
export const rotateSchema = z.object({
  grace_seconds: z._default(intIn(0, ROTATION_GRACE.max), ROTATION_GRACE.default),
});
