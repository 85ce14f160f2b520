/**
 * The webhook counters (docs/design/0018-webhook-delivery-writes.md): what one flushed batch writes
 * on its writer's item, how a read sums the items back into the status the API shows, and which
 * idle writers a read folds into the total (and that folding changes no sum).
 */
import { mergeCounters, sumCounters } from '../../lambda/webhooks/rules/webhook-counter-sums';
import { COUNTER_SHARDS, FOLD_IDLE_MS, MAX_RETRY_AGE_MS, counterUpdate, foldPlan } from '../../lambda/webhooks/storage/webhook-counters';
import { WEBHOOK_COUNTER_PARTITIONS, metaKeys, writerPartition } from '../../lambda/core/storage/keys';

process.env.MSG_META_TABLE ??= 'msg-meta';

describe('webhook counters', () => {
  it('write one batch\'s counts with one conditional UpdateItem on the writer\'s item, applied only if its sequence number is new', () => {
    const u = counterUpdate('acme', 'W1', { success: 9, failure: 1, pending: 0, at: 2000, successAt: 2000, error: { at: 1500, message: 'HTTP 500' } }, 'c1#0', 7, 2100);
    expect(u?.Key).toEqual({ pk: `NS#acme#WEBHOOK#W1#COUNTS#${writerPartition('c1#0')}`, sk: '#STATUS#W#c1#0' });
    expect(u?.UpdateExpression).toBe('SET #seq = :seq, written_at = :now, last_delivery = :last_delivery, last_success_at = :last_success_at, last_error = :last_error, last_error_at = :last_error_at ADD success_count :success_count, failure_count :failure_count');
    expect(u?.ConditionExpression).toBe('attribute_not_exists(#seq) OR #seq < :seq');
    expect(u?.ExpressionAttributeValues).toMatchObject({ ':seq': 7, ':now': 2100, ':success_count': 9, ':failure_count': 1, ':last_error': 'HTTP 500' });
    expect(counterUpdate('acme', 'W1', { success: 0, failure: 0, pending: 0 }, 'c1#0', 8, 2200)).toBeUndefined();
    const hook = counterUpdate('acme', 'W1', { success: 0, failure: 0, pending: 0, hookFailures: 2, hookFailure: { at: 5, message: 'on_success rate limited' } }, 'c1#0', 9, 2300);
    expect(hook?.UpdateExpression).toContain('ADD hook_failure_count :hook_failure_count');
    expect(hook?.ExpressionAttributeValues).toMatchObject({ ':hook_failure_count': 2, ':last_hook_error': 'on_success rate limited', ':last_hook_failure': 5 });
  });

  it('spread the writers over the writer partitions, each read with the total\'s: the busiest key takes about half the writes', () => {
    expect(WEBHOOK_COUNTER_PARTITIONS).toBe(2);
    const writers = Array.from({ length: 400 }, (_, i) => `${(i * 2654435761 >>> 0).toString(16)}c0ffee${i}#${i % 8}`);
    const per = [0, 0];
    for (const w of writers) per[writerPartition(w)]++;
    expect(Math.min(...per)).toBeGreaterThan(140);
    expect(writers.every((w) => writerPartition(w) === writerPartition(w))).toBe(true);
    const read = metaKeys.webhookCounterPartitions('acme', 'W1');
    expect(read).toEqual(['NS#acme#WEBHOOK#W1', 'NS#acme#WEBHOOK#W1#COUNTS#0', 'NS#acme#WEBHOOK#W1#COUNTS#1']);
    for (const w of writers.slice(0, 20)) expect(read).toContain(metaKeys.webhookCounterWriter('acme', 'W1', w).pk);
  });

  it('never send an update after a fold may have taken its item: the retry age is far below the fold\'s idle age', () => {
    expect(FOLD_IDLE_MS).toBeGreaterThanOrEqual(MAX_RETRY_AGE_MS * 6);
  });

  it('sum the items: counts add up, the latest time and retry win, an error older than the latest success is gone', () => {
    const items = [
      { success_count: 5, last_delivery: 100, last_success_at: 100 },
      { success_count: 2, failure_count: 1, pending_retries: 1, last_delivery: 300, last_error: 'HTTP 503', last_error_at: 300, next_retry: 900 },
      { pending_retries: -1, failure_count: 1, last_delivery: 200, last_error: 'timeout after 10 s', last_error_at: 200 },
    ];
    expect(sumCounters(items)).toEqual({ success_count: 7, failure_count: 2, pending_retries: 0, last_delivery: 300, last_error: 'HTTP 503', next_retry: 900 });
    expect(sumCounters([...items, { success_count: 1, last_delivery: 400, last_success_at: 400 }])).not.toHaveProperty('last_error');
    expect(sumCounters([])).toEqual({});
    expect(COUNTER_SHARDS).toBe(8);
  });

  it('read the single status item written before shards as one more item', () => {
    expect(sumCounters([{ success_count: 3, failure_count: 1, last_delivery: 50, last_error: 'HTTP 500' }, { success_count: 1 }])).toEqual({ success_count: 4, failure_count: 1, last_delivery: 50, last_error: 'HTTP 500' });
  });

  it('fold: the merged total of any subset of items, summed with the rest, gives the same status', () => {
    const items: Record<string, unknown>[] = [
      { success_count: 3, failure_count: 1, last_delivery: 50, last_error: 'HTTP 500' },
      { success_count: 5, last_delivery: 100, last_success_at: 100, hook_failure_count: 1, last_hook_error: 'a', last_hook_failure: 90 },
      { failure_count: 2, pending_retries: 1, last_delivery: 300, last_error: 'HTTP 503', last_error_at: 300, next_retry: 900 },
      { pending_retries: -1, last_delivery: 200, last_success_at: 200, hook_failure_count: 2, last_hook_error: 'b', last_hook_failure: 150 },
    ];
    const whole = sumCounters(items);
    for (let mask = 0; mask < 1 << items.length; mask++) {
      const folded = items.filter((_, i) => mask & (1 << i));
      const rest = items.filter((_, i) => !(mask & (1 << i)));
      expect(sumCounters([mergeCounters(folded), ...rest])).toEqual(whole);
      expect(sumCounters([mergeCounters([mergeCounters(folded), ...rest])])).toEqual(whole);
    }
  });

  it('fold only writer items idle for the fold age, never the total or an active writer', () => {
    const now = 10 * FOLD_IDLE_MS;
    const partition = [
      { pk: 'NS#acme#WEBHOOK#W1', sk: '#STATUS', success_count: 4 },
      { pk: 'NS#acme#WEBHOOK#W1', sk: '#STATUS#W#old#0', seq: 3, written_at: now - FOLD_IDLE_MS - 1, success_count: 1 },
      { pk: 'NS#acme#WEBHOOK#W1', sk: '#STATUS#W#new#0', seq: 9, written_at: now - 1000, success_count: 2 },
    ];
    const plan = foldPlan('acme', 'W1', partition, now);
    expect(plan?.total?.sk).toBe('#STATUS');
    expect(plan?.writers.map((w) => w.sk)).toEqual(['#STATUS#W#old#0']);
    expect(foldPlan('acme', 'W1', partition.slice(0, 1).concat(partition[2]), now)).toBeUndefined();
    // Writer items of both writer partitions, and one written before them in the total's partition.
    const spread = [
      ...partition,
      { pk: 'NS#acme#WEBHOOK#W1#COUNTS#0', sk: '#STATUS#W#a#0', seq: 1, written_at: now - FOLD_IDLE_MS - 1, success_count: 1 },
      { pk: 'NS#acme#WEBHOOK#W1#COUNTS#1', sk: '#STATUS#W#b#0', seq: 2, written_at: now - FOLD_IDLE_MS - 1, success_count: 1 },
    ];
    const both = foldPlan('acme', 'W1', spread, now);
    expect(both?.total).toBe(partition[0]);
    expect(both?.writers.map((w) => `${w.pk} ${w.sk}`)).toEqual(['NS#acme#WEBHOOK#W1 #STATUS#W#old#0', 'NS#acme#WEBHOOK#W1#COUNTS#0 #STATUS#W#a#0', 'NS#acme#WEBHOOK#W1#COUNTS#1 #STATUS#W#b#0']);
  });
});
