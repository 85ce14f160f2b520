/**
 * Schedule operations behind the HTTP handler: create, list (cursor pages),
 * get, PUT, PATCH, DELETE. Validation is the API's usual: a wrong JSON type is 400, a bad value
 * or a missing field 422 naming it; a payload over 256 KiB or properties over 16 KiB are 413.
 */
import { ApiError, alreadyExists, invalidRequest, notFound, validationError } from '../core/rules/errors';
import { isoTime } from '../core/rules/envelope';
import { REDACTED } from '../webhooks/rules/webhooks';
import { newId } from '../core/rules/clock';
import { assertMessageSize } from '../core/rules/message';
import { nextRunAfter, toScheduleConfig, patched, type ScheduleConfig } from './rules/schedules';
import { createSchedule, deleteSchedule, getSchedule, listSchedules, replaceSchedule, scheduleLimit, withDueKeys, type ScheduleItem } from './storage/schedules';

const scheduleNotFound = (name: string) => notFound('SCHEDULE_NOT_FOUND', `Schedule ${name}`);

/** Who reads: keys without `manage` (`manage: false`) see no payload, property value or partition key. */
export interface ScheduleReader {
  manage: boolean;
}
const WRITER: ScheduleReader = { manage: true };

/**
 * The schedule as the API shows it. What it publishes (payload, property values, partition key)
 * can hold tokens, as a webhook's templates can: keys without `manage` see `[redacted]` in their
 * place (DESIGN.md section 2, docs/security.md), the fields kept so the shape stays the same.
 * @example scheduleView(s, { manage: false }).payload // '[redacted]'
 */
function scheduleView(s: ScheduleItem, reader: ScheduleReader = WRITER) {
  const c = s.config;
  const iso = (t: number | undefined) => (t === undefined ? null : isoTime(t));
  const shown = (v: string) => (reader.manage ? v : REDACTED);
  return {
    name: s.name,
    ...(c.cron !== undefined ? { cron: c.cron } : {}),
    ...(c.every !== undefined ? { every: c.every } : {}),
    timezone: c.timezone,
    topic: c.topic,
    payload: shown(c.payload),
    ...(c.content_type !== undefined ? { content_type: c.content_type } : {}),
    properties: Object.fromEntries(Object.entries(c.properties ?? {}).map(([k, v]) => [k, shown(v)])),
    ...(c.partition_key !== undefined ? { partition_key: shown(c.partition_key) } : {}),
    start_at: iso(c.start_at),
    end_at: iso(c.end_at),
    enabled: c.enabled,
    next_run_at: c.enabled ? iso(s.next_run_at) : null,
    last_run_at: iso(s.last_run_at),
    last_message_id: s.last_message_id ?? null,
    last_error: s.last_error ?? null,
    last_skipped: s.skipped_from === undefined ? null : { from: isoTime(s.skipped_from), until: iso(s.skipped_until) },
    created_at: isoTime(s.created_at),
    updated_at: isoTime(s.updated_at),
  };
}

function checkConfig(c: ScheduleConfig) {
  assertMessageSize(c);
}

export async function createScheduleOp(ns: string, name: string, config: ScheduleConfig, now: number) {
  checkConfig(config);
  const item = withDueKeys({
    namespace: ns,
    name,
    id: newId(now),
    config,
    created_at: now,
    updated_at: now,
    anchor: now,
    version: 1,
    next_run_at: nextRunAfter(config, now, now),
  });
  const limit = await scheduleLimit(ns);
  const r = await createSchedule(item, limit);
  if (r === 'exists') throw alreadyExists('SCHEDULE_ALREADY_EXISTS', `Schedule ${name}`);
  if (r === 'limit') {
    throw new ApiError(409, 'SCHEDULE_LIMIT_EXCEEDED', `This namespace has reached its limit of ${limit} schedules; delete one first, or ask an operator to raise it (npm run admin -- schedule-limit set <namespace> <n>).`, { limit });
  }
  return scheduleView(item);
}

export async function getScheduleOp(ns: string, name: string, reader: ScheduleReader = WRITER) {
  const s = await getSchedule(ns, name);
  if (!s) throw scheduleNotFound(name);
  return scheduleView(s, reader);
}

/**
 * Replaces the configuration (PUT, or a PATCH merged with the stored one). A run that is due and
 * not made yet (the tick has not reached it, or retries it) is kept, with its claim, and made with
 * the new configuration; otherwise the next run is computed again from now.
 */
export async function updateScheduleOp(ns: string, name: string, make: (stored: ScheduleItem) => ScheduleConfig, now: number) {
  for (let attempt = 0; attempt < 5; attempt++) {
    const stored = await getSchedule(ns, name);
    if (!stored) throw scheduleNotFound(name);
    const config = make(stored);
    checkConfig(config);
    const timingChanged = config.cron !== stored.config.cron || config.every !== stored.config.every || config.start_at !== stored.config.start_at;
    const anchor = timingChanged ? now : stored.anchor;
    const { claim_time, claim_until, claim_msg, claim_since, claim_token, due_shard: _s, due_sk: _k, ...kept } = stored as ScheduleItem & { due_shard?: string; due_sk?: string };
    const due = stored.next_run_at;
    const keepDue = due !== undefined && due <= now && stored.config.enabled && config.enabled;
    const claim = keepDue && claim_time === due ? definedOnly({ claim_time, claim_until, claim_msg, claim_since, claim_token }) : {};
    const item = withDueKeys({ ...kept, ...claim, config, anchor, updated_at: now, version: stored.version + 1, next_run_at: keepDue ? due : nextRunAfter(config, now, anchor) });
    if (item.next_run_at === undefined) delete item.next_run_at;
    if (await replaceSchedule(item, stored.version)) return scheduleView(item);
  }
  throw new ApiError(409, 'CONFLICT', `Schedule ${name} is being changed by another request; retry.`);
}

const definedOnly = <T extends Record<string, unknown>>(o: T) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

export async function deleteScheduleOp(ns: string, name: string, now: number) {
  if (!(await deleteSchedule(ns, name))) throw scheduleNotFound(name);
  return { deleted_at: isoTime(now) };
}

/** `limit` 1 to 100 (default 50) and an opaque `cursor` from the previous page. */
export async function listSchedulesOp(ns: string, query: Record<string, string | undefined> | null | undefined, reader: ScheduleReader = WRITER) {
  const rawLimit = query?.limit;
  let limit = 50;
  if (rawLimit !== undefined) {
    if (!/^-?\d+$/.test(rawLimit)) throw invalidRequest('Query parameter "limit" must be an integer.', { fields: [{ field: 'limit', message: 'must be an integer' }] });
    limit = Number(rawLimit);
    if (limit < 1 || limit > 100) throw validationError([{ field: 'limit', message: 'must be between 1 and 100' }]);
  }
  let after: string | undefined;
  if (query?.cursor !== undefined) {
    after = Buffer.from(query.cursor, 'base64url').toString('utf8');
    if (!after || Buffer.from(after, 'utf8').toString('base64url') !== query.cursor) throw validationError([{ field: 'cursor', message: 'is not a cursor this API returned; start again without it' }]);
  }
  const page = await listSchedules(ns, limit, after);
  const last = page.items[page.items.length - 1];
  return { schedules: page.items.map((s) => scheduleView(s, reader)), limit, next_cursor: page.more && last ? Buffer.from(last.name, 'utf8').toString('base64url') : null };
}

export { toScheduleConfig, patched };
