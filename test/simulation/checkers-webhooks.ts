/**
 * The webhook checkers, on what the receivers recorded (./receivers.ts) and the ledger.
 */
import type { Violation } from './checkers';
import type { Ledger } from './ledger';
import type { Post } from './receivers';
import type { WebhookSeen } from './actors-webhooks';

function one(checker: string, cases: { step: number; what: string }[], what: string): Violation[] {
  if (!cases.length) return [];
  const sorted = [...cases].sort((a, b) => a.step - b.step);
  return [{ checker, step: sorted[0].step, count: cases.length, evidence: `${cases.length} ${what}: ${sorted.slice(0, 4).map((c) => c.what).join('; ')}` }];
}

/**
 * No POST of a message to an endpoint after that endpoint answered it 2xx (in time), but for a
 * second SQS copy of its delivery job (`copies`: a SendMessageBatch applied whose answer was lost,
 * sent again by the SDK; SQS standard queues may hold duplicates, docs/webhooks.md).
 */
export function noPostAfter2xx(ledger: Ledger, posts: Post[], paths: string[], checker: string, copies: (messageId: string) => number = () => 1): Violation[] {
  const okAt = new Map<string, number>();
  const cases: { step: number; what: string }[] = [];
  for (const p of posts) if (paths.includes(p.path) && p.status >= 200 && p.status < 300) okAt.set(`${p.path} ${p.messageId}`, Math.min(p.at, okAt.get(`${p.path} ${p.messageId}`) ?? Infinity));
  for (const p of posts) {
    if (!paths.includes(p.path) || !p.marker || copies(p.messageId) > 1) continue;
    const ok = okAt.get(`${p.path} ${p.messageId}`);
    // A POST that arrived 100 ms or more after a 2xx was sent: the service had its answer.
    // (Two POSTs at once, the second arriving before the first's 2xx, are a duplicate the
    // at-least-once delivery allows.)
    if (ok !== undefined && p.arrivedAt - ok > 100) cases.push({ step: ledger.promised.get(p.marker)?.step ?? 0, what: `${p.path} ${p.messageId} POSTed ${p.arrivedAt - ok} ms after its 2xx` });
  }
  return one(checker, cases, 'POSTs after a 2xx for the same message');
}

/** Every message answered 201 for a topic under `prefix` got a 2xx from the always-healthy endpoint. */
export function delivered(ledger: Ledger, posts: Post[], prefix: string, path: string): Violation[] {
  const ok = new Set(posts.filter((p) => p.path === path && p.status >= 200 && p.status < 300).map((p) => p.marker));
  const lost = [...ledger.promised.values()].filter((p) => p.topic.startsWith(prefix) && !ok.has(p.marker)).map((p) => ({ step: p.step, what: `${p.id} (${p.marker})` }));
  return one('webhook-201-never-delivered', lost, 'messages answered 201 never answered 2xx by a healthy endpoint');
}

/** Every replayed message reached the endpoint with a 2xx exactly once (two bulk replays at once). */
export function replayedOnce(ledger: Ledger, posts: Post[], hs: WebhookSeen): Violation[] {
  const n = new Map<string, number>();
  for (const p of posts) if (p.path === '/replay' && p.status >= 200 && p.status < 300) n.set(p.marker, (n.get(p.marker) ?? 0) + 1);
  const step = (m: string) => ledger.promised.get(m)?.step ?? 0;
  const twice = hs.replayMarkers.filter((m) => (n.get(m) ?? 0) > 1).map((m) => ({ step: step(m), what: `${ledger.promised.get(m)?.id} answered 2xx ${n.get(m)} times` }));
  const never = hs.replayMarkers.filter((m) => !n.has(m)).map((m) => ({ step: step(m), what: `${ledger.promised.get(m)?.id} (${m})` }));
  return [...one('replay-delivered-twice', twice, 'replayed messages POSTed and answered 2xx more than once'), ...one('replay-never-delivered', never, 'failed messages two bulk replays never delivered')];
}

/** A dead endpoint under steady traffic is disabled by its thresholds within `boundMs` of its first failure. */
export function deadDisabled(posts: Post[], status: string | undefined, boundMs: number, now: number, step: number): Violation[] {
  const first = posts.find((p) => p.path === '/dead');
  if (!first || now - first.at < boundMs || status === 'disabled') return [];
  const n = posts.filter((p) => p.path === '/dead').length;
  return [{ checker: 'dead-endpoint-not-disabled', step, count: 1, evidence: `status ${status} ${Math.round((now - first.at) / 1000)} s after its first failed POST (${n} POSTs; failure_threshold 3, retry_count 2)` }];
}

/**
 * No more than `max` requests open at once at `path` (a webhook's `max_in_flight`), by when each
 * arrived and was answered: the places a delivery gives back are handed to the waiting ones
 * (docs/webhooks.md "Delivery limits").
 */
export function placesHold(ledger: Ledger, posts: Post[], path: string, max: number): Violation[] {
  const edges = posts.filter((p) => p.path === path).flatMap((p) => [{ t: p.arrivedAt, d: 1, p }, { t: p.at, d: -1, p }]);
  // An answer and an arrival at the same millisecond: the answer first (the place was free).
  edges.sort((a, b) => a.t - b.t || a.d - b.d);
  const out: { step: number; what: string }[] = [];
  let open = 0;
  for (const e of edges) {
    open += e.d;
    if (e.d > 0 && open > max) out.push({ step: ledger.promised.get(e.p.marker)?.step ?? 0, what: `${open} open at ${path} when ${e.p.messageId} arrived (max_in_flight ${max})` });
  }
  return one('in-flight-over-max', out, 'requests over max_in_flight');
}

/** From 4 s after a change of `rate_limit`, no second holds more than about the new limit (by arrival). */
export function rateHolds(posts: Post[], hs: WebhookSeen): Violation[] {
  const out: { step: number; what: string }[] = [];
  const times = posts.filter((p) => p.path === '/rate').map((p) => p.arrivedAt).sort((a, b) => a - b);
  for (const [i, c] of hs.rateChanges.entries()) {
    const end = hs.rateChanges[i + 1]?.at ?? Infinity;
    const inRange = times.filter((t) => t >= c.at + 4000 && t < end);
    let worst = 0;
    for (let a = 0, b = 0; b < inRange.length; b++) {
      while (inRange[b] - inRange[a] >= 1000) a++;
      worst = Math.max(worst, b - a + 1);
    }
    // One more at a window's edge (docs/webhooks.md), and a quarter more: arrival times bunch
    // when the loaded machine stalls the process the receiver shares with the service.
    if (worst > Math.floor(c.limit * 1.25) + 1) out.push({ step: c.step, what: `${worst} POSTs in one second from 4 s after rate_limit ${c.limit}` });
  }
  return one('rate-limit-after-change', out, 'seconds over the lowered rate_limit');
}
