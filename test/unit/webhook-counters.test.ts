/**
 * The sharded webhook counters (issue 22 item 4): what one flushed batch writes, and how a read
 * sums the shards back into the status the API shows.
 */
import { COUNTER_SHARDS, counterUpdate, sumCounters } from '../../lambda/storage/webhook-counters';

process.env.MSG_META_TABLE ??= 'msg-meta';

describe('webhook counters', () => {
  it('write one batch\'s counts with one UpdateItem on a shard of its own partition key', () => {
    const u = counterUpdate('acme', 'W1', { success: 9, failure: 1, pending: 0, at: 2000, successAt: 2000, error: { at: 1500, message: 'HTTP 500' } }, 3);
    expect(u?.Key).toEqual({ pk: 'NS#acme#WEBHOOK#W1#STATUS#3', sk: '#STATUS' });
    expect(u?.UpdateExpression).toBe('SET last_delivery = :last_delivery, last_success_at = :last_success_at, last_error = :last_error, last_error_at = :last_error_at ADD success_count :success_count, failure_count :failure_count');
    expect(u?.ExpressionAttributeValues).toMatchObject({ ':success_count': 9, ':failure_count': 1, ':last_error': 'HTTP 500' });
    expect(counterUpdate('acme', 'W1', { success: 0, failure: 0, pending: 0 })).toBeUndefined();
    expect(COUNTER_SHARDS).toBeGreaterThanOrEqual(8);
  });

  it('sum the shards: counts add up, the latest time and retry win, an error older than the latest success is gone', () => {
    const shards = [
      { success_count: 5, last_delivery: 100, last_success_at: 100 },
      { success_count: 2, failure_count: 1, pending_retries: 1, last_delivery: 300, last_error: 'HTTP 503', last_error_at: 300, next_retry: 900 },
      { pending_retries: -1, failure_count: 1, last_delivery: 200, last_error: 'timeout after 10 s', last_error_at: 200 },
    ];
    expect(sumCounters(shards)).toEqual({ success_count: 7, failure_count: 2, pending_retries: 0, last_delivery: 300, last_error: 'HTTP 503', next_retry: 900 });
    expect(sumCounters([...shards, { success_count: 1, last_delivery: 400, last_success_at: 400 }])).not.toHaveProperty('last_error');
    expect(sumCounters([])).toEqual({});
  });

  it('read the single status item written before shards as one more shard', () => {
    expect(sumCounters([{ success_count: 3, failure_count: 1, last_delivery: 50, last_error: 'HTTP 500' }, { success_count: 1 }])).toEqual({ success_count: 4, failure_count: 1, last_delivery: 50, last_error: 'HTTP 500' });
  });
});
