/**
 * Secret rotation (extension) end to end: a rotated webhook signs with the new and the old secret
 * during the grace period, so a receiver verifying with either (the standardwebhooks package, as
 * a receiver would) accepts every delivery; after the grace period, or with no grace, only the
 * new secret verifies. PATCH keeps the grace period; a PUT with a secret of its own ends it.
 */
import { Webhook } from 'standardwebhooks';
import { client } from '../fixtures/http';
import { type ReceivedRequest } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { newSecret } from '../../lambda/webhooks/rules/signatures';
import { webhookTestbed } from '../fixtures/webhook-testbed';

jest.setTimeout(60_000);

const bed = webhookTestbed('whr');


/** What a receiver's Standard Webhooks verifier says about a request with `secret`. */
function verifiesWith(secret: string, r: ReceivedRequest): boolean {
  const headers = { 'webhook-id': String(r.headers['webhook-id']), 'webhook-timestamp': String(r.headers['webhook-timestamp']), 'webhook-signature': String(r.headers['webhook-signature']) };
  try {
    new Webhook(secret).verify(r.body.toString('utf8'), headers);
    return true;
  } catch {
    return false;
  }
}

async function rotate(name: string, body?: Record<string, unknown>) {
  const res = await bed.call('POST', `/webhooks/${name}/secret/rotate`, body);
  expect(res.status).toBe(200);
  return res.body.data as { name: string; secret: string; rotated_at: string; previous_secret_expires_at: string | null };
}

/** Publishes one message and returns the request the receiver got for it. */
async function deliveryOf(topic: string, recv: Awaited<ReturnType<typeof bed.receivers.start>>) {
  const n = recv.requests.length;
  expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: `p${n}` })).status).toBe(201);
  return (await recv.waitFor(n + 1))[n];
}

describe('secret rotation', () => {
  it('signs with the old and the new secret during the grace period, so either verifies', async () => {
    const recv = await bed.receivers.start();
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic });
    const before = Date.now();
    const r = await rotate(w.name);
    expect(r.secret).toMatch(/^whsec_/);
    expect(r.secret).not.toBe(w.secret);
    expect(Date.parse(r.previous_secret_expires_at!) - before).toBeGreaterThanOrEqual(86400_000 - 5000); // default 24 h
    expect(Date.parse(r.previous_secret_expires_at!) - before).toBeLessThanOrEqual(86400_000 + 5000);

    const req = await deliveryOf(topic, recv);
    expect(String(req.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifiesWith(r.secret, req)).toBe(true);
    expect(verifiesWith(w.secret, req)).toBe(true);
    expect(verifiesWith(newSecret(), req)).toBe(false);
    // The secret is shown by the rotation only.
    expect(JSON.stringify((await bed.call('GET', `/webhooks/${w.name}`)).body)).not.toContain(r.secret.slice(6));
  });

  it('ends the old secret at once with grace_seconds 0, and after its grace period otherwise', async () => {
    const recv = await bed.receivers.start();
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic });
    const s2 = await rotate(w.name, { grace_seconds: 3 });
    // Signed before it arrived: one that arrived within the grace was signed with the old secret
    // too (on a machine slow enough to deliver it after the grace, only the new one is sure).
    const during = await deliveryOf(topic, recv);
    expect(verifiesWith(s2.secret, during)).toBe(true);
    if (during.at < Date.parse(s2.previous_secret_expires_at!)) expect(verifiesWith(w.secret, during)).toBe(true);
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(s2.previous_secret_expires_at!) - Date.now()) + 100));
    const afterGrace = await deliveryOf(topic, recv);
    expect(String(afterGrace.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect([verifiesWith(s2.secret, afterGrace), verifiesWith(w.secret, afterGrace)]).toEqual([true, false]);

    const s3 = await rotate(w.name, { grace_seconds: 0 });
    expect(s3.previous_secret_expires_at).toBeNull();
    const now = await deliveryOf(topic, recv);
    expect([verifiesWith(s3.secret, now), verifiesWith(s2.secret, now)]).toEqual([true, false]);
  });

  it('keeps the grace period through a PATCH, and a PUT with a secret of its own ends it', async () => {
    const recv = await bed.receivers.start();
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic });
    const r = await rotate(w.name);
    expect((await bed.call('PATCH', `/webhooks/${w.name}`, { retry_delay: 2 })).status).toBe(200);
    const patched = await deliveryOf(topic, recv);
    expect([verifiesWith(r.secret, patched), verifiesWith(w.secret, patched)]).toEqual([true, true]);

    const own = newSecret();
    expect((await bed.call('PUT', `/webhooks/${w.name}`, { url: recv.url, topic_filter: topic, secret: own })).status).toBe(200);
    const put = await deliveryOf(topic, recv);
    expect([verifiesWith(own, put), verifiesWith(r.secret, put), verifiesWith(w.secret, put)]).toEqual([true, false, false]);
  });

  it('refuses a grace period over 7 days (422) or of the wrong type (400), an unknown webhook (404), and a key without manage (403)', async () => {
    const w = await createWebhook(bed.call, { url: 'http://127.0.0.1:1/hook', topic_filter: unique('t') });
    const over = await bed.call('POST', `/webhooks/${w.name}/secret/rotate`, { grace_seconds: 7 * 86400 + 1 });
    expect(over.status).toBe(422);
    expect(over.body.error?.details.fields).toEqual([expect.objectContaining({ field: 'grace_seconds' })]);
    expect((await bed.call('POST', `/webhooks/${w.name}/secret/rotate`, { grace_seconds: '60' })).status).toBe(400);
    expect((await bed.call('POST', '/webhooks/nope/secret/rotate')).body.error?.code).toBe('WEBHOOK_NOT_FOUND');
    expect((await client(bed.server.baseUrl, bed.ns.keys.publish)('POST', `/webhooks/${w.name}/secret/rotate`)).status).toBe(403);
    expect((await rotate(w.name, { grace_seconds: 7 * 86400 })).previous_secret_expires_at).not.toBeNull();
  });
});
