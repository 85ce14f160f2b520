/**
 * Schedules, pure: the request schemas, the next run of a cron (croner, time
 * zones through Intl) or `every` schedule, and the message a run publishes.
 *
 * Time-zone rules (croner's, tested in test/unit/schedules.test.ts):
 * - a local time that does not exist on a spring-forward day (02:30 in New York on 8 March 2026)
 *   runs once at the first valid time after the gap (03:00 local);
 * - a local time that happens twice on a fall-back day (01:30 in New York on 1 November 2026)
 *   runs once, at its first occurrence.
 *
 * Lateness ({@link nextAfterRun}): every scheduled time that a tick reaches at most
 * {@link LATENESS_BOUND_MS} late is made, one run each, in order; times older than that (an
 * outage) collapse into one run, the first of them, and the rest are skipped and recorded. A run
 * refused with a retryable answer is retried by later ticks while its window is open
 * ({@link runWindowOpen}).
 */
import { Cron } from 'croner';
import * as z from 'zod/mini';
import { ApiError, validationError, type FieldProblem } from '../../core/rules/errors';
import { parseIsoTime } from '../../core/rules/delays';
import { messageSchema } from '../../core/rules/message';
import { topicNameProblem } from '../../core/rules/topics';
import { intIn, resourceName } from '../../core/rules/validation';

/** Shortest `every`: one minute (the tick's own period). */
const MIN_EVERY_SECONDS = 60;
/** Longest `every`: 366 days. */
const MAX_EVERY_SECONDS = 366 * 24 * 3600;
export const DEFAULT_SCHEDULE_LIMIT = 1000;
const DEFAULT_TIMEZONE = 'UTC';

const configFields = {
  cron: z.optional(z.string()),
  every: z.optional(intIn(MIN_EVERY_SECONDS, MAX_EVERY_SECONDS)),
  timezone: z.optional(z.string()),
  topic: z.string(),
  payload: messageSchema.shape.payload,
  content_type: messageSchema.shape.content_type,
  properties: messageSchema.shape.properties,
  partition_key: messageSchema.shape.partition_key,
  start_at: z.optional(z.nullable(z.string())),
  end_at: z.optional(z.nullable(z.string())),
  enabled: z.optional(z.boolean()),
};

/** POST /schedules. */
export const createScheduleSchema = z.object({ name: resourceName(), ...configFields });
/** PUT /schedules/{name}: the whole configuration (a `name` in the body must be the path's). */
export const replaceScheduleSchema = z.object({ name: z.optional(z.string()), ...configFields });
/** PATCH /schedules/{name}: any of the fields; `cron` replaces `every` and the other way round; null clears start_at / end_at. */
export const patchScheduleSchema = z.object({
  cron: z.optional(z.string()),
  every: z.optional(intIn(MIN_EVERY_SECONDS, MAX_EVERY_SECONDS)),
  timezone: z.optional(z.string()),
  topic: z.optional(z.string()),
  payload: z.optional(z.string()),
  content_type: messageSchema.shape.content_type,
  properties: messageSchema.shape.properties,
  partition_key: messageSchema.shape.partition_key,
  start_at: z.optional(z.nullable(z.string())),
  end_at: z.optional(z.nullable(z.string())),
  enabled: z.optional(z.boolean()),
});

/** A schedule's configuration as stored. Times are epoch ms. */
export interface ScheduleConfig {
  cron?: string;
  every?: number;
  timezone: string;
  topic: string;
  payload: string;
  content_type?: string;
  properties?: Record<string, string>;
  partition_key?: string;
  start_at?: number;
  end_at?: number;
  enabled: boolean;
}

type ConfigInput = z.infer<typeof replaceScheduleSchema>;

/** Whether `tz` is an IANA time zone name Intl knows. */
function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Why a cron expression is refused (5 fields: minute hour day-of-month month day-of-week), or undefined. */
export function cronProblem(expr: string, timezone = DEFAULT_TIMEZONE): string | undefined {
  const fields = expr.trim().split(/\s+/);
  if (fields.length !== 5) return `must have 5 fields (minute hour day-of-month month day-of-week), not ${fields.length}`;
  try {
    const c = new Cron(expr, { timezone, paused: true });
    if (!c.nextRun(new Date())) return 'never runs';
    return undefined;
  } catch (e) {
    return (e as Error).message.replace(/^CronPattern: /, '');
  }
}

/** Checks what the schema cannot (one of cron and every, the zone, the topic, the times) and returns the stored shape; 422 naming every bad field. */
export function toScheduleConfig(input: ConfigInput): ScheduleConfig {
  const problems: FieldProblem[] = [];
  const timezone = input.timezone ?? DEFAULT_TIMEZONE;
  if (!isTimeZone(timezone)) problems.push({ field: 'timezone', message: 'must be an IANA time zone such as Europe/Paris or UTC' });
  if (input.cron === undefined && input.every === undefined) problems.push({ field: 'cron', message: 'give either cron (5 fields) or every (seconds, at least 60)' });
  if (input.cron !== undefined && input.every !== undefined) problems.push({ field: 'every', message: 'give either cron or every, not both' });
  if (input.cron !== undefined && problems.length === 0) {
    const why = cronProblem(input.cron, timezone);
    if (why) problems.push({ field: 'cron', message: why });
  }
  const topicWhy = topicNameProblem(input.topic);
  if (topicWhy) problems.push({ field: 'topic', message: topicWhy });
  const time = (field: 'start_at' | 'end_at') => {
    const raw = input[field];
    if (raw === undefined || raw === null) return undefined;
    const t = parseIsoTime(raw);
    if (t === undefined) problems.push({ field, message: 'must be an ISO 8601 date-time with a time zone, e.g. 2026-12-24T18:00:00Z' });
    return t;
  };
  const start_at = time('start_at');
  const end_at = time('end_at');
  if (start_at !== undefined && end_at !== undefined && end_at <= start_at) problems.push({ field: 'end_at', message: 'must be after start_at' });
  if (problems.length) throw validationError(problems);
  return {
    ...(input.cron !== undefined ? { cron: input.cron.trim().replace(/\s+/g, ' ') } : {}),
    ...(input.every !== undefined ? { every: input.every } : {}),
    timezone,
    topic: input.topic,
    payload: input.payload,
    ...(input.content_type !== undefined ? { content_type: input.content_type } : {}),
    ...(input.properties !== undefined ? { properties: input.properties } : {}),
    ...(input.partition_key !== undefined ? { partition_key: input.partition_key } : {}),
    ...(start_at !== undefined ? { start_at } : {}),
    ...(end_at !== undefined ? { end_at } : {}),
    enabled: input.enabled ?? true,
  };
}

/** The stored configuration with a PATCH applied, as a whole-configuration input to validate again. */
export function patched(stored: ScheduleConfig, patch: z.infer<typeof patchScheduleSchema>): ConfigInput {
  const iso = (t: number | undefined) => (t === undefined ? undefined : new Date(t).toISOString());
  const base: ConfigInput = {
    cron: stored.cron,
    every: stored.every,
    timezone: stored.timezone,
    topic: stored.topic,
    payload: stored.payload,
    content_type: stored.content_type,
    properties: stored.properties,
    partition_key: stored.partition_key,
    start_at: iso(stored.start_at),
    end_at: iso(stored.end_at),
    enabled: stored.enabled,
  };
  const out: ConfigInput = { ...base };
  for (const [k, v] of Object.entries(patch)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  // The patch names the kind of timing it wants; the other kind goes.
  if (patch.cron !== undefined && patch.every === undefined) delete out.every;
  if (patch.every !== undefined && patch.cron === undefined) delete out.cron;
  return out;
}

/**
 * The first scheduled time strictly after `after` (epoch ms), not before start_at and not after
 * end_at; undefined when there is none. `every` counts from start_at (its first run), or from
 * `anchor` (the creation or last replacement) when there is no start_at.
 */
export function nextRunAfter(c: ScheduleConfig, after: number, anchor: number): number | undefined {
  let next: number | undefined;
  if (c.cron !== undefined) {
    const from = c.start_at !== undefined ? Math.max(after, c.start_at - 1) : after;
    next = new Cron(c.cron, { timezone: c.timezone, paused: true }).nextRun(new Date(from))?.getTime();
  } else if (c.every !== undefined) {
    const period = c.every * 1000;
    const origin = c.start_at ?? anchor;
    const k = after < origin ? (c.start_at !== undefined ? 0 : 1) : Math.floor((after - origin) / period) + 1;
    next = origin + Math.max(k, c.start_at !== undefined ? 0 : 1) * period;
  }
  if (next === undefined || (c.end_at !== undefined && next > c.end_at)) return undefined;
  return next;
}

/**
 * How late a scheduled time may be reached and still be made on its own: 5 minutes, five periods
 * of the shortest `every`. EventBridge's `rate(1 minute)` fires anywhere within its minute and a
 * tick may start late (cold start, retry) or take long, so a per-minute schedule's times are
 * often reached more than one period late; a bound in periods would make a daily schedule run two
 * days of missed times after an outage, so it is in time. It is also each run's retry window.
 */
export const LATENESS_BOUND_MS = 5 * 60_000;

export interface AfterRun {
  /** The schedule's next run (undefined: none, past end_at). */
  next: number | undefined;
  /** Times skipped because they were more than the bound late: from `from` up to, not including, `until`. */
  skipped?: { from: number; until: number | undefined };
}

/**
 * What follows the run made for scheduled time `t` when a tick runs at `now`: the next scheduled
 * time (never before `anchor`, the last change of the timing: times of a configuration that did
 * not exist yet are not made). When it is more than {@link LATENESS_BOUND_MS} before `now`, the
 * times up to that bound are skipped and the next run is the first within it.
 */
export function nextAfterRun(c: ScheduleConfig, t: number, now: number, anchor: number): AfterRun {
  const next = nextRunAfter(c, Math.max(t, anchor), anchor);
  if (next === undefined || next >= now - LATENESS_BOUND_MS) return { next };
  const resume = nextRunAfter(c, now - LATENESS_BOUND_MS - 1, anchor);
  return { next: resume, skipped: { from: next, until: resume } };
}

/**
 * Whether a run of scheduled time `t`, first attempted at `since`, may still be retried at `now`:
 * for {@link LATENESS_BOUND_MS} after the later of the two (a run made late after an outage gets
 * its own window).
 */
export const runWindowOpen = (t: number, since: number, now: number) => now - Math.max(t, since) <= LATENESS_BOUND_MS;

/**
 * Whether a run's failure may pass if tried again: the service's own failures (not an
 * {@link ApiError}: DynamoDB, SQS), 5xx answers (SERVICE_UNAVAILABLE: a stream's write capacity)
 * 429 RATE_LIMIT_EXCEEDED (the publish budget refills each minute) and the namespace's schedule
 * runs per minute (409 LIMIT_EXCEEDED, resource schedule-runs-per-minute). The other refusals
 * (TOPIC_NOT_FOUND, a payload too large) would answer the same again.
 */
export const isRetryableFailure = (e: unknown) =>
  !(e instanceof ApiError) || e.status >= 500 || e.status === 429 || (e.code === 'LIMIT_EXCEEDED' && e.details.resource === 'schedule-runs-per-minute');

const PLACEHOLDER = /\{\{\s*\.(scheduled_time|schedule)\s*\}\}/g;

/** Replaces `{{.scheduled_time}}` (ISO 8601 UTC) and `{{.schedule}}` (the name) in a text. */
export const render = (text: string, name: string, scheduledTime: number) =>
  text.replace(PLACEHOLDER, (_m, what: string) => (what === 'schedule' ? name : new Date(scheduledTime).toISOString()));

/** The message one run publishes. */
export function runMessage(c: ScheduleConfig, name: string, scheduledTime: number) {
  return {
    payload: render(c.payload, name, scheduledTime),
    ...(c.content_type !== undefined ? { content_type: c.content_type } : {}),
    properties: Object.fromEntries(Object.entries(c.properties ?? {}).map(([k, v]) => [k, render(v, name, scheduledTime)])),
    ...(c.partition_key !== undefined ? { partition_key: c.partition_key } : {}),
  };
}
