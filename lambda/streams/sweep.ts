/**
 * Stream upkeep as a resource task (../sweeper/tasks.ts): each visit settles dead reservations and trims by
 * `retention_days` and `max_size_gb` (moving `earliest_offset`; DynamoDB TTL reclaims the chunks),
 * and each purge visit removes part of a deleted stream's log and records (../logs/sweep.ts).
 */
import type { StreamItem } from './storage/streams';
import { partitionsFrom, streamLogKey } from './storage/stream-log';
import { purgeLog, visitLog, type LogSpec } from '../logs/sweep';
import type { ResourceTask, SweepContext } from '../core/sweep-task';

const DAY_MS = 86_400_000;
const GIB = 1024 ** 3;

const STREAM_LOG: LogSpec<StreamItem> = {
  kind: 'STREAM',
  table: 'streamLog',
  logKey: streamLogKey,
  partitionsFrom: (head, from) => partitionsFrom(head, from),
  retentionMs: (s) => s.retention_days * DAY_MS,
  maxBytes: (s) => s.max_size_gb * GIB,
};

/** One visit of one stream (tests call it with a later clock). */
export const sweepStream = (s: StreamItem, ctx: Pick<SweepContext, 'now'>, walkLimit?: number) => visitLog(s, STREAM_LOG, ctx, walkLimit);

export const streamsTask: ResourceTask<StreamItem> = {
  name: 'streams',
  kind: 'STREAM',
  visit: (s, ctx) => sweepStream(s, ctx),
  purge: (job, ctx) => purgeLog(job, STREAM_LOG, ctx),
};
