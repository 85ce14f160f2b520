/**
 * How the counter items of a webhook incarnation (../storage/webhook-counters.ts: the total, the writers'
 * items, the old shards) add up: the status a read shows (`sumCounters`) and the single item a
 * fold writes (`mergeCounters`). Pure: no table access.
 */

export interface WebhookStatusItem {
  success_count?: number;
  failure_count?: number;
  /** Epoch ms of the last attempt. */
  last_delivery?: number;
  last_error?: string;
  /** Epoch ms of the most recently scheduled retry. */
  next_retry?: number;
  /** Deliveries waiting for a retry; next_retry means something only while this is above 0. */
  pending_retries?: number;
  /** Hooks that published nothing because the namespace's publish rate limit refused them. */
  hook_failure_count?: number;
  last_hook_error?: string;
}

/** The larger of two optional numbers; undefined only when both are. */
export const max = (a: number | undefined, b: number | undefined) => (a === undefined ? b : b === undefined ? a : Math.max(a, b));

/** The value when it is a number. */
export const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
const COUNTS = ['success_count', 'failure_count', 'pending_retries', 'hook_failure_count'] as const;

/** Sums counter items: counts add up; the latest time, error and retry win; an error older than the latest success is gone. */
export function sumCounters(items: Record<string, unknown>[]): WebhookStatusItem {
  const raw = mergeCounters(items);
  const out: WebhookStatusItem = {};
  for (const f of COUNTS) if (raw[f] !== undefined) out[f] = raw[f] as number;
  for (const f of ['last_delivery', 'next_retry', 'last_error', 'last_hook_error'] as const) if (raw[f] !== undefined) (out as Record<string, unknown>)[f] = raw[f];
  if (out.last_error !== undefined && (num(raw.last_success_at) ?? -1) >= (num(raw.last_error_at) ?? -1)) delete out.last_error;
  return out;
}

/**
 * Merges counter items into one item of the same attributes (what a fold writes to the total):
 * counts summed, the latest time, error, retry and hook error kept with their times.
 */
export function mergeCounters(items: Record<string, unknown>[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let errorAt = -1;
  let hookAt = -1;
  for (const i of items) {
    for (const f of COUNTS) if (num(i[f]) !== undefined) out[f] = ((out[f] as number | undefined) ?? 0) + (num(i[f]) as number);
    for (const f of ['last_delivery', 'next_retry', 'last_success_at'] as const) out[f] = max(out[f] as number | undefined, num(i[f]));
    if (typeof i.last_error === 'string') {
      // The item written before shards had no time of its error: its last delivery stands in.
      const at = num(i.last_error_at) ?? num(i.last_delivery) ?? 0;
      if (at > errorAt) {
        errorAt = at;
        out.last_error = i.last_error;
        out.last_error_at = at;
      }
    }
    if (typeof i.last_hook_error === 'string' && (num(i.last_hook_failure) ?? 0) > hookAt) {
      hookAt = num(i.last_hook_failure) ?? 0;
      out.last_hook_error = i.last_hook_error;
      out.last_hook_failure = hookAt;
    }
  }
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  return out;
}
