/**
 * The pure rules of append-only logs (streams and subscriptions): reservation tokens and the
 * readable horizon, chunk packing and encoding, derived counters and trimming decisions, and the
 * response budget of consumes.
 */
import { lowestPending, PENDING_SETTLE_MS, pendingBytes, pendingToken, stableHorizon, staleTokens, tokenBlock, tokenKey, tokenTime } from '../../lambda/logs/rules/log-horizon';
import { blockLayout, decodeMessage, encodeMessage, MAX_CHUNK_BYTES, packChunks, storedBytes } from '../../lambda/logs/rules/log-chunks';
import { canSkipTrim, gapsAt, isTrimmed, messageCount, retainedBytesFrom, unreadCount, type Gap, type HeadCounters } from '../../lambda/logs/rules/retention';
import { MAX_RESPONSE_MESSAGE_BYTES, ResponseBudget, responseBytes } from '../../lambda/core/rules/response-budget';
import type { PublishedMessage } from '../../lambda/core/rules/message';
import { pollInterval } from '../../lambda/logs/storage/log-arrivals';

const now = 1_800_000_000_000;
const token = (at: number, count = 1, bytes = 10, r = 'r') => pendingToken(at, { count, bytes }, r);

describe('reservation tokens and the readable horizon', () => {
  it('carries its time and its block size', () => {
    const t = pendingToken(now, { count: 12, bytes: 5000 }, 'abc');
    expect(tokenTime(t)).toBe(now);
    expect(tokenBlock(t)).toEqual({ count: 12, bytes: 5000 });
  });

  it('names its random part (what keyed the pcum entry of reservations made before 2026-11-29), which may hold a dash (base64url)', () => {
    const t = pendingToken(now, { count: 12, bytes: 5000 }, 'a-b_c');
    expect(tokenKey(t)).toBe('a-b_c');
    expect(tokenTime(t)).toBe(now);
    expect(tokenBlock(t)).toEqual({ count: 12, bytes: 5000 });
  });

  it('stops readers before the lowest block still being written', () => {
    expect(stableHorizon({ [token(now - 10, 1, 1, 'a')]: 10, [token(now - 5, 1, 1, 'b')]: 4 }, 20, now)).toBe(4);
  });

  it('is the next position when nothing is pending', () => {
    expect(stableHorizon({}, 20, now)).toBe(20);
    expect(stableHorizon(undefined, 0, now)).toBe(0);
  });

  it('lets readers past a reservation whose publish died long ago, which the sweeper reports stale', () => {
    const old = token(now - PENDING_SETTLE_MS - 1);
    expect(stableHorizon({ [old]: 3 }, 20, now)).toBe(20);
    expect(staleTokens({ [old]: 3, [token(now, 1, 1, 'y')]: 9 }, now)).toEqual([old]);
  });

  it('keeps the sweeper below every reservation, stale ones included, until it settles them', () => {
    expect(lowestPending({ [token(now - PENDING_SETTLE_MS - 1)]: 3 }, 20)).toBe(3);
    expect(lowestPending({}, 20)).toBe(20);
  });

  it('adds up the bytes of every pending reservation', () => {
    expect(pendingBytes({ [token(now, 2, 100, 'a')]: 0, [token(now, 3, 50, 'b')]: 2 })).toBe(150);
    expect(pendingBytes(undefined)).toBe(0);
  });
});

describe('chunks', () => {
  const msg = (payload: string, extra: Partial<PublishedMessage> = {}): PublishedMessage => ({
    message_id: 'id-1',
    topic: 't',
    payload,
    content_type: 'application/json',
    properties: {},
    published_at: now,
    size: Buffer.byteLength(payload),
    ...extra,
  });

  it('stores a message as a compact tuple and reads it back whole', () => {
    const m = msg('{"a":"é"}', { content_type: 'text/plain', properties: { k: 'v' } });
    const t = encodeMessage(m, 7, 100, true);
    expect(t).toEqual([7, 100, '{"a":"é"}', 'text/plain', { k: 'v' }, 'id-1']);
    expect(decodeMessage(t, { at: now, p: 3 })).toEqual({
      position: 7,
      cum: 100,
      payload: '{"a":"é"}',
      content_type: 'text/plain',
      properties: { k: 'v' },
      message_id: 'id-1',
      size: 10,
      published_at: now,
      partition: 3,
    });
  });

  it('leaves out the default content type, empty properties and (for streams) the message id', () => {
    const t = encodeMessage(msg('x'), 0, 0, false);
    expect(t).toEqual([0, 0, 'x', null, null]);
    expect(decodeMessage(t, { at: now })).toMatchObject({ content_type: 'application/json', properties: {}, partition: 0 });
    expect(decodeMessage(t, { at: now }).message_id).toBeUndefined();
  });

  it('packs tuples into as few chunks as the size limit allows, in order, one oversized tuple alone', () => {
    expect(packChunks([1, 2, 3, 4, 5], () => 40, 100)).toEqual([[1, 2], [3, 4], [5]]);
    expect(packChunks([1, 2, 3], (n) => (n === 2 ? 500 : 10), 100)).toEqual([[1], [2], [3]]);
    expect(packChunks([], () => 1)).toEqual([]);
  });

  it('fits 100 messages of 2 KiB in one chunk and a 256 KiB message with room under 400 KB', () => {
    const small = Array.from({ length: 100 }, (_, i) => encodeMessage(msg('x'.repeat(2048)), i, i * 2048, true));
    expect(packChunks(small, storedBytes)).toHaveLength(1);
    const big = encodeMessage(msg('"'.repeat(256 * 1024)), 0, 0, true);
    expect(storedBytes(big)).toBeGreaterThan(256 * 1024);
    expect(MAX_CHUNK_BYTES + 16 * 1024).toBeLessThan(400 * 1000);
  });

  it('lays out a block: cumulative bytes before each message and each partition\'s last index', () => {
    expect(blockLayout([3, 5, 2], [0, 1, 0])).toEqual({ before: [0, 3, 8], lastIndex: { 0: 2, 1: 1 }, counts: { 0: 2, 1: 1 }, indexIn: [0, 0, 1] });
  });
});

describe('derived counters', () => {
  const head = (h: Partial<HeadCounters>): HeadCounters => ({ next: 10, next_bytes: 100, earliest: 0, ...h });

  it('counts the positions between earliest and next, less what failed publishes did not store', () => {
    expect(messageCount(head({}))).toBe(10);
    expect(messageCount(head({ earliest: 4, gaps: { '2': { s: 1, n: 2, b: 20 }, '7': { s: 6, n: 2, b: 20 } } }))).toBe(4);
    expect(messageCount(head({ earliest: 10 }))).toBe(0);
  });

  it('counts retained bytes low: less gaps after the message and less every pending reservation', () => {
    expect(retainedBytesFrom(head({}), { position: 3, cum: 30 })).toBe(70);
    expect(retainedBytesFrom(head({ gaps: { '8': { s: 6, n: 3, b: 25 } } }), { position: 3, cum: 30 })).toBe(45);
    expect(retainedBytesFrom(head({ gaps: { '2': { s: 1, n: 2, b: 25 } } }), { position: 3, cum: 30 })).toBe(70);
    expect(retainedBytesFrom(head({ pending: { [token(now, 2, 15)]: 8 } }), { position: 3, cum: 30 })).toBe(55);
  });
});

describe('gaps spilled from the head', () => {
  const gaps = (n: number): Record<string, Gap> => Object.fromEntries(Array.from({ length: n }, (_, i) => [String(i * 10 + 1), { s: i * 10, n: 2, b: 5 }]));

  it('sorts a spilled page at a new earliest: dropped before it, spanning it, kept after it', () => {
    const out = gapsAt(gaps(4), 11);
    expect(out.dropped).toEqual([{ s: 0, n: 2, b: 5 }]);
    expect(out.spanning).toEqual({ '11': { s: 10, n: 2, b: 5 } });
    expect(Object.keys(out.kept)).toEqual(['21', '31']);
  });

  it('counts spilled gaps exactly in message_count, and errs low on retained bytes, high on lag', () => {
    const all: HeadCounters = { next: 100, next_bytes: 1000, earliest: 0, gaps: gaps(8) };
    // The first 5 spilled (positions 0..41), the other 3 still in the head.
    const spilled: HeadCounters = { next: 100, next_bytes: 1000, earliest: 0, gaps: Object.fromEntries(Object.entries(gaps(8)).slice(5)), sg_n: 10, sg_b: 25, sg_s: 0, sg_e: 41 };
    expect(messageCount(spilled)).toBe(messageCount(all));
    for (const position of [0, 20, 41, 42, 99]) {
      expect(retainedBytesFrom(spilled, { position, cum: position * 10 })).toBeLessThanOrEqual(retainedBytesFrom(all, { position, cum: position * 10 }));
    }
    expect(unreadCount(spilled, 0, 100)).toBe(unreadCount(all, 0, 100));
    expect(unreadCount(spilled, 20, 100)).toBeGreaterThanOrEqual(unreadCount(all, 20, 100));
  });
});

describe('trimming decisions', () => {
  const h: HeadCounters = { next: 10, next_bytes: 100, earliest: 0 };
  it('trims a message past retention whatever the size', () => {
    expect(isTrimmed({ position: 0, cum: 0, published_at: now - 1 }, h, { cutoff: now, maxBytes: 1e9 })).toBe(true);
  });

  it('trims a message inside retention only while the log from it on is over the cap', () => {
    expect(isTrimmed({ position: 0, cum: 0, published_at: now }, h, { cutoff: now, maxBytes: 99 })).toBe(true);
    expect(isTrimmed({ position: 0, cum: 0, published_at: now }, h, { cutoff: now, maxBytes: 100 })).toBe(false);
  });

  it('never trims over the cap because of bytes a failed publish did not store', () => {
    const failed: HeadCounters = { ...h, gaps: { '9': { s: 5, n: 5, b: 50 } } };
    expect(isTrimmed({ position: 0, cum: 0, published_at: now }, failed, { cutoff: now, maxBytes: 60 })).toBe(false);
  });

  it('skips the walk while the oldest message is inside retention and the log within its cap', () => {
    const state = { ...h, trim_at: now + 1000, earliest_bytes: 0 };
    expect(canSkipTrim(state, now, 100)).toBe(true);
    expect(canSkipTrim(state, now + 1000, 100)).toBe(false);
    expect(canSkipTrim(state, now, 99)).toBe(false);
    expect(canSkipTrim(h, now, 1e9)).toBe(false);
  });

  it('skips the walk of a log found empty until something is reserved', () => {
    expect(canSkipTrim({ ...h, idle_next: 10 }, now, 1)).toBe(true);
    expect(canSkipTrim({ ...h, idle_next: 9 }, now, 1)).toBe(false);
  });
});

describe('response budget', () => {
  it('counts a value as it travels in a proxy response: JSON escaped twice', () => {
    expect(responseBytes('a')).toBe(5);
    expect(responseBytes('a"b')).toBe(10);
    expect(responseBytes('\u0001')).toBe(11);
  });

  it('always takes the first value, then only while the total fits', () => {
    const b = new ResponseBudget(30);
    expect(b.take('x'.repeat(100))).toBe(true);
    expect(b.take('y')).toBe(false);
    const c = new ResponseBudget(12);
    expect([c.take('a'), c.take('b'), c.take('c')]).toEqual([true, true, false]);
  });

  it('keeps 25 messages of 256 KiB of quotes under the 6 MB Lambda response limit', () => {
    const b = new ResponseBudget();
    const message = { offset: 1, payload: '"'.repeat(256 * 1024) };
    let taken = 0;
    while (taken < 25 && b.take(message)) taken++;
    expect(taken).toBeGreaterThan(0);
    expect(taken).toBeLessThan(25);
    expect(taken * responseBytes(message)).toBeLessThanOrEqual(MAX_RESPONSE_MESSAGE_BYTES);
    expect(MAX_RESPONSE_MESSAGE_BYTES).toBeLessThan(6 * 1000 * 1000);
  });
});

describe('long-poll intervals', () => {
  it('back off as a log stays idle: 200 ms, then 500 ms, then 1 s; about 1.3 head reads a second over 25 s', () => {
    expect([0, 999, 1000, 4999, 5000, 25_000].map(pollInterval)).toEqual([200, 200, 500, 500, 1000, 1000]);
    let reads = 0;
    for (let t = 0; t < 25_000; t += pollInterval(t)) reads++;
    expect(reads / 25).toBeLessThan(1.4);
  });
});
