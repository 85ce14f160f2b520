/**
 * The delivery log, replay and secret rotation (extensions), the pure parts: list query and
 * cursor, time keys and shards, the entry of an attempt (final or not), request schemas, the
 * signatures during a grace period (verified with the standardwebhooks package), what PUT and
 * PATCH keep of a rotation, replay jobs and execution names, and the exact DynamoDB requests.
 */
import { Webhook } from 'standardwebhooks';
import {
  bulkReplaySchema,
  decodeCursor,
  encodeCursor,
  LOG_SHARDS,
  logShard,
  parseListQuery,
  rotateSchema,
  timeKey,
  timeOfKey,
} from '../../lambda/webhooks/rules/delivery-log';
import { buildRequest, type InlineJob } from '../../lambda/webhooks/rules/delivery';
import { newSecret, standardWebhooksHeaders } from '../../lambda/webhooks/rules/signatures';
import { WEBHOOK_DEFAULTS, type WebhookConfig } from '../../lambda/webhooks/rules/webhooks';
import type { PublishedMessage } from '../../lambda/core/rules/message';
import { parse } from '../../lambda/core/rules/validation';
import { attemptEntry } from '../../lambda/webhooks/delivery-log';
import { graceSecrets, keptRotation } from '../../lambda/webhooks/rotation';
import { replayJob } from '../../lambda/webhooks/replay';
import { executionName } from '../../lambda/webhooks/storage/retry-workflow';
import { buildAttemptPut, buildPages } from '../../lambda/webhooks/storage/delivery-log';
import { buildRotation } from '../../lambda/webhooks/storage/webhook-secrets';
import type { WebhookItem } from '../../lambda/webhooks/storage/webhooks';
import { newId } from '../../lambda/core/rules/clock';
import { refusal } from '../fixtures/errors';

const message: PublishedMessage = { message_id: 'M1', topic: 't', payload: '{"a":1}', content_type: 'application/json', properties: {}, published_at: 1_767_225_600_000, size: 7 };
const job: InlineJob = { namespace: 'acme', webhook_id: 'W1', webhook_name: 'hook', message };
const config: WebhookConfig = { ...WEBHOOK_DEFAULTS, retry_count: 2, url: 'https://example.com/h', topic_filter: 't', debug: false, log_requests: false, log_responses: false };
const webhook = (extra: Record<string, unknown> = {}) => ({ kind: 'WEBHOOK', id: 'W1', name: 'hook', namespace: 'acme', topic_filter: 't', status: 'active', created_at: 0, updated_at: 0, config, secret: 'whsec_cur', ...extra }) as WebhookItem;

describe('list query', () => {
  it('defaults to 50 and takes limit, status, message_id and a cursor it issued', () => {
    expect(parseListQuery(undefined)).toEqual({ limit: 50 });
    const key = timeKey(1, 'M1', 1, 'E1');
    expect(parseListQuery({ limit: '7', status: 'failed', message_id: 'M1', cursor: encodeCursor(key) })).toEqual({ limit: 7, status: 'failed', message_id: 'M1', cursor: key });
  });

  it.each([
    ['a non-integer limit', { limit: '1.5' }, 400],
    ['an unknown status', { status: 'pending' }, 400],
    ['a cursor it did not issue', { cursor: 'abc' }, 400],
    ['limit 0', { limit: '0' }, 422],
    ['limit 101', { limit: '101' }, 422],
  ])('refuses %s', (_label, query, status) => {
    expect(refusal(() => parseListQuery(query)).status).toBe(status);
  });

  it('round-trips cursors', () => {
    const key = timeKey(1_767_225_600_123, '01JD', 3, newId());
    expect(decodeCursor(encodeCursor(key))).toBe(key);
    expect(timeOfKey(key)).toBe(1_767_225_600_123);
  });
});

describe('time keys and shards', () => {
  it('sort as strings in time order, then by message and attempt', () => {
    const keys = [timeKey(10_000, 'B', 1, 'x'), timeKey(9_999, 'Z', 9, 'x'), timeKey(10_000, 'A', 2, 'x')];
    expect([...keys].sort()).toEqual([keys[1], keys[2], keys[0]]);
  });

  it('puts every attempt of a message in one shard, and messages over all shards', () => {
    expect(logShard('M1')).toBe(logShard('M1'));
    const shards = new Set(Array.from({ length: 400 }, () => logShard(newId())));
    expect(shards.size).toBe(LOG_SHARDS);
  });
});

describe('the entry of an attempt', () => {
  const r = (ok: boolean, extra: Record<string, unknown> = {}) => ({ ok, status_code: ok ? 200 : 500, error: ok ? null : 'HTTP 500', response: '', duration_ms: 40, ...extra });

  it('is final when the attempt succeeded, when its retries are used up, or when the body was too large', () => {
    const at = 1_767_225_600_040;
    expect(attemptEntry(job, config, 1, r(true), at)).toEqual({ message_id: 'M1', attempt: 1, attempted_at: at - 40, duration_ms: 40, status_code: 200, outcome: 'succeeded', error: null, final: true, replay: false });
    expect(attemptEntry(job, config, 1, r(false), at)).toMatchObject({ outcome: 'failed', error: 'HTTP 500', final: false });
    expect(attemptEntry(job, config, 3, r(false), at).final).toBe(true); // 1 + retry_count 2
    expect(attemptEntry(job, config, 1, r(false, { tooLarge: true, status_code: null, error: 'payload too large', duration_ms: 0 }), at)).toMatchObject({ status_code: null, error: 'payload too large', final: true });
    expect(attemptEntry({ ...job, replay_id: 'R1' }, config, 1, r(true), at).replay).toBe(true);
  });

  it('is one Put on the message\'s key, outside the index, expiring after 7 days', () => {
    const e = attemptEntry(job, config, 2, r(false), 1_767_225_600_040);
    const put = buildAttemptPut('acme', 'W1', e, 'E1').input;
    expect(put.Item).toMatchObject({
      pk: 'NS#acme#WH#W1#MSG#M1',
      sk: `A#${timeKey(e.attempted_at, 'M1', 2, 'E1')}`,
      at: timeKey(e.attempted_at, 'M1', 2, 'E1'),
      ttl: Math.ceil(e.attempted_at / 1000) + 7 * 86400,
      error: 'HTTP 500',
    });
    expect(put.Item).not.toHaveProperty('lpk');
  });

  it('packs a batch\'s attempts into pages per outcome: at most 25 entries within 60 s, keyed by the oldest, about 1 KB for ten', () => {
    const t0 = 1_767_225_600_000;
    const entry = (i: number, ok: boolean, dt = 0) => {
      const e = attemptEntry({ ...job, message: { ...job.message, message_id: `01KAXQ7M3N0000000000000${String(i).padStart(3, '0')}` } }, config, 1, r(ok), t0 + 40 + dt);
      return { ...e, at: timeKey(e.attempted_at, e.message_id, 1, 'abcdefgh') };
    };
    const ten = buildPages('acme', 'W1', Array.from({ length: 10 }, (_, i) => entry(i, true)), () => 3);
    expect(ten).toHaveLength(1);
    expect(ten[0]).toMatchObject({ pk: 'NS#acme#WH#W1#succeeded#3', sk: `P#${entry(0, true).at}` });
    expect(Buffer.byteLength(JSON.stringify(ten[0]))).toBeLessThan(1024);
    const mixed = buildPages('acme', 'W1', [...Array.from({ length: 30 }, (_, i) => entry(i, true)), entry(40, false), entry(41, false, 61_000)], () => 0);
    expect(mixed.map((p) => [p.pk, (JSON.parse(String(p.e)) as unknown[]).length])).toEqual([
      ['NS#acme#WH#W1#succeeded#0', 25],
      ['NS#acme#WH#W1#succeeded#0', 5],
      ['NS#acme#WH#W1#failed#0', 1],
      ['NS#acme#WH#W1#failed#0', 1],
    ]);
  });

  it("keep the address of an addressed message's entry (a portal session lists only its own), and nothing for an unaddressed one", () => {
    const at = timeKey(1_767_225_600_000, 'M1', 1, 'E1');
    const e = { ...attemptEntry(job, config, 1, r(false), 1_767_225_600_040), at };
    const [plain] = buildPages('acme', 'W1', [e]);
    expect(JSON.parse(String(plain.e))[0]).toHaveLength(6);
    expect(plain).not.toHaveProperty('a');
    // One address for the whole page when every entry has it (a webhook of an application's
    // pages): a page of ten addressed entries stays one write unit.
    const ten = Array.from({ length: 10 }, (_, i) => ({ ...e, application: 'portal-cust-42', at: timeKey(1_767_225_600_000 + i, `M${i}`, 1, 'abcdefgh') }));
    const [addressed] = buildPages('acme', 'W1', ten);
    expect(addressed.a).toBe('portal-cust-42');
    expect((JSON.parse(String(addressed.e)) as unknown[][]).map((x) => x.length)).toEqual(Array(10).fill(6));
    expect(Buffer.byteLength(JSON.stringify(addressed))).toBeLessThan(1024);
    // Mixed (a webhook of no application): each addressed entry names its own.
    const [mixed] = buildPages('acme', 'W1', [ten[0], { ...ten[1], application: 'cust-2' }, { ...e, at: ten[2].at }]);
    expect(mixed).not.toHaveProperty('a');
    expect((JSON.parse(String(mixed.e)) as unknown[][]).map((x) => x[6])).toEqual(['portal-cust-42', 'cust-2', undefined]);
    expect(buildAttemptPut('acme', 'W1', { ...e, application: 'cust-1' }, 'E1').input.Item).toMatchObject({ application: 'cust-1' });
  });
});

describe('request schemas', () => {
  it('takes a bulk replay since an ISO time, only of failed deliveries', () => {
    expect(parse(bulkReplaySchema, { since: '2026-11-22T10:00:00.000Z' })).toEqual({ since: '2026-11-22T10:00:00.000Z', status: 'failed' });
    expect(refusal(() => parse(bulkReplaySchema, { since: '2026-11-22' })).status).toBe(422);
    expect(refusal(() => parse(bulkReplaySchema, { since: '2026-11-22T10:00:00Z', status: 'all' })).status).toBe(422);
    expect(refusal(() => parse(bulkReplaySchema, { since: '2026-11-22T10:00:00Z', status: 1 })).status).toBe(400);
  });

  it('takes a grace period of 0 to 7 days, 24 h by default', () => {
    expect(parse(rotateSchema, {})).toEqual({ grace_seconds: 86400 });
    expect(parse(rotateSchema, { grace_seconds: 0 }).grace_seconds).toBe(0);
    expect(refusal(() => parse(rotateSchema, { grace_seconds: 604801 })).status).toBe(422);
    expect(refusal(() => parse(rotateSchema, { grace_seconds: -1 })).status).toBe(422);
  });
});

describe('signatures during a grace period', () => {
  const current = newSecret();
  const previous = newSecret();

  it('carry one signature per secret, each verifying with the standardwebhooks package', () => {
    const built = buildRequest(config, current, message, Date.now(), [previous]);
    if ('tooLarge' in built) throw new Error('unexpected');
    expect(built.headers['webhook-signature'].split(' ')).toHaveLength(2);
    for (const s of [current, previous]) expect(() => new Webhook(s).verify(built.body.toString('utf8'), built.headers)).not.toThrow();
    expect(() => new Webhook(newSecret()).verify(built.body.toString('utf8'), built.headers)).toThrow();
  });

  it('are the spec\'s single signature without a previous secret', () => {
    const body = Buffer.from('{}');
    expect(standardWebhooksHeaders('M1', 1, body, current, [])).toEqual(standardWebhooksHeaders('M1', 1, body, current));
    expect(standardWebhooksHeaders('M1', 1, body, current)['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
  });

  it('use the previous secret only until it expires', () => {
    expect(graceSecrets(webhook({ previous_secret: 'whsec_old', previous_secret_expires_at: 2000 }), 1999)).toEqual(['whsec_old']);
    expect(graceSecrets(webhook({ previous_secret: 'whsec_old', previous_secret_expires_at: 2000 }), 2000)).toEqual([]);
    expect(graceSecrets(webhook(), 0)).toEqual([]);
  });

  it('survive a PUT or PATCH that gives no secret, and end with one that does', () => {
    const rotated = webhook({ previous_secret: 'whsec_old', previous_secret_expires_at: 2000 });
    expect(keptRotation(rotated, undefined)).toEqual({ previous_secret: 'whsec_old', previous_secret_expires_at: 2000 });
    expect(keptRotation(rotated, 'whsec_new')).toEqual({});
    expect(keptRotation(webhook(), undefined)).toEqual({});
  });

  it('are set by one conditional UpdateItem on the secret it read, counting a version', () => {
    const u = buildRotation('acme', webhook(), { secret: 'whsec_next', previousExpiresAt: 5000, now: 1000 }).input;
    expect(u.ConditionExpression).toBe('id = :id AND secret = :old AND attribute_not_exists(config.application)');
    expect(u.UpdateExpression).toContain('previous_secret = :prev');
    expect(u.UpdateExpression).toContain('ADD version :one');
    expect(u.ExpressionAttributeValues).toMatchObject({ ':new': 'whsec_next', ':old': 'whsec_cur', ':prev': 'whsec_cur', ':exp': 5000, ':id': 'W1' });
    expect(buildRotation('acme', webhook(), { secret: 'whsec_next', now: 1000 }).input.UpdateExpression).toContain('REMOVE previous_secret, previous_secret_expires_at');
  });

  it('write an updated_at above the version they read, as PUT and PATCH do (the rate slots follow the newest)', () => {
    const read = Date.now() + 60_000; // a PATCH written from a container whose clock is ahead
    const u = buildRotation('acme', webhook({ updated_at: read }), { secret: 'whsec_next', now: 1000 }).input;
    expect(u.ExpressionAttributeValues?.[':now']).toBe(read + 1);
    expect(buildRotation('acme', webhook(), { secret: 'whsec_next', now: 1000 }).input.ExpressionAttributeValues?.[':now']).toBeGreaterThanOrEqual(1000);
  });

  it("hold only over the application they read: a webhook moved meanwhile is read again", () => {
    const u = buildRotation('acme', webhook({ config: { ...config, application: 'cust-a' } }), { secret: 'whsec_next', now: 1000 }).input;
    expect(u.ConditionExpression).toBe('id = :id AND secret = :old AND config.application = :app');
    expect(u.ExpressionAttributeValues).toMatchObject({ ':app': 'cust-a' });
  });
});

describe('replay jobs', () => {
  it('carry their message inline, or a reference to the retained copy when too large, with the replay id', () => {
    expect(replayJob(webhook(), message, 'R1')).toEqual({ namespace: 'acme', webhook_id: 'W1', webhook_name: 'hook', replay_id: 'R1', message });
    const big = { ...message, payload: 'x'.repeat(210 * 1024) };
    expect(replayJob(webhook(), big, 'R1')).toEqual({ namespace: 'acme', webhook_id: 'W1', webhook_name: 'hook', replay_id: 'R1', message_ref: { message_id: 'M1' } });
  });

  it('run under a workflow execution name of their own, within 80 characters', () => {
    const [w, m, r] = [newId(), newId(), newId()];
    expect(executionName(w, m)).toBe(`${w}-${m}`);
    expect(executionName(w, m, r)).toBe(`${w}-${m}-${r}`);
    expect(executionName(w, m, r)).toHaveLength(80);
  });
});
