/**
 * One simulation run: the world (./world.ts), the plan's steps (./plan.ts) with the immediate
 * checks after each, a fault-free drain with the sweeper and the tick, the final reads and every
 * checker (./checkers.ts). Returns the violations, each marked known (./known-defects.ts) or not.
 */
import { seededRandom } from '../../local/seeded-random';
import { probeHoldMs } from '../../lambda/webhooks/rules/endpoint-health';
import { sweep } from '../../lambda/sweeper/tasks';
import { QUIET_MS, RECONCILE_EVERY_MS } from '../../lambda/queues/sweep';
import { act, newSeen } from './actors';
import { countEquals, deadLetteredOnce, envelopes, exactlyOnceInLog, heldQueueTruth, idempotency, readYourWrites, schedulesRanOnce, unread, workQueue, type Violation } from './checkers';
import { PENDING_SETTLE_MS } from '../../lambda/logs/rules/log-horizon';
import { KNOWN_DEFECTS, type KnownDefect } from './known-defects';
import { describeStep, makePlan, type Step } from './plan';
import { drainQueue, readStream, readSubscription, type StreamReader } from './read';
import { PLACES, startWorld } from './world';
import { deadDisabled, delivered, noPostAfter2xx, placesHold, rateHolds, replayedOnce } from './checkers-webhooks';
import { answersDocumented } from './documented';
import { drainFifo } from './actors-fifo';
import { fifoQueue } from './checkers-fifo';
import { readOffsets } from './actors-streams';
import { countsAgree, streamGroups } from './checkers-streams';
import { drainSubscribers } from './actors-subscribers';
import { subscribersOnce } from './checkers-subscribers';
import { redriveAll } from './actors-redrive';
import { REDRIVE_VISIBILITY_SECONDS } from '../../lambda/queues/redrive';
import { SETTLE_VISIBILITY_SECONDS } from '../../lambda/queues/leftovers';
import { redrivenOnce } from './checkers-redrive';
import { youngQueues } from './checkers-young';

export interface SimOptions {
  seed: number;
  /** Steps to run (at most); with `minutes`, the run also stops at that time. */
  steps: number;
  minutes?: number;
  maxBurst?: number;
  /** Size of the newer actors (./plan.ts); 1 unless given. */
  scale?: number;
  faultShare?: number;
  /** A plan to run instead of the seed's (a minimised replay). */
  plan?: Step[];
  log?: (line: string) => void;
}

export interface SimResult {
  seed: number;
  plan: Step[];
  stepsRun: number;
  requests: number;
  seconds: { steps: number; total: number };
  tally: Record<string, number>;
  violations: (Violation & { known?: KnownDefect })[];
  /** The first step after which each checker failed, for the report. */
  firstSeen: Record<string, number>;
  sdk: { calls: unknown; delayed: unknown; failed: unknown };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runSimulation(o: SimOptions): Promise<SimResult> {
  const log = o.log ?? (() => undefined);
  const t0 = Date.now();
  const plan = o.plan ?? makePlan(o.seed, { steps: o.steps, maxBurst: o.maxBurst ?? 300, scale: o.scale });
  const w = await startWorld({ seed: o.seed, faultShare: o.faultShare ?? 0.02});
  const { ledger, names } = w;
  const seen = newSeen();
  const random = seededRandom(o.seed ^ 0x5eed);
  const violations: Violation[] = [];
  const firstSeen: Record<string, number> = {};
  const found = (vs: Violation[]) => {
    for (const v of vs) {
      firstSeen[v.checker] ??= v.step;
      violations.push(v);
    }
  };
  const ryw: StreamReader = { markers: [], next: 0 };
  const rywSub: string[] = [];
  let stepsRun = 0;
  let stepsEnded = t0;
  try {
    const endAt = o.minutes ? t0 + o.minutes * 60_000 : Infinity;
    for (const step of plan) {
      if (Date.now() >= endAt) break;
      ledger.step = step.index;
      await Promise.all(step.actions.map((a) => act(w, seen, a, step.index, random)));
      // Immediate promises: a 201'd message is readable at once in the stream and the subscription,
      // or, held back by a block still pending (./checkers.ts `readYourWrites`), once the settle
      // time has passed: the same readers go on reading until then.
      const stepEnd = Date.now();
      await readStream(ledger, names.stream, 'ryw', ryw);
      rywSub.push(...(await readSubscription(ledger, names.subscription, 'ryw')));
      const now = { stream: [...ryw.markers], sub: [...rywSub] };
      // Read again every 3 s (each read is two consumes through the API), the last one at the bound.
      const rywUntil = stepEnd + PENDING_SETTLE_MS + 5000;
      while ((unread(seen, step.index, ryw.markers).length || unread(seen, step.index, rywSub).length) && Date.now() < rywUntil) {
        await sleep(Math.min(3000, rywUntil - Date.now()));
        await readStream(ledger, names.stream, 'ryw', ryw);
        rywSub.push(...(await readSubscription(ledger, names.subscription, 'ryw')));
      }
      const held = [unread(seen, step.index, now.stream).length - unread(seen, step.index, ryw.markers).length, unread(seen, step.index, now.sub).length - unread(seen, step.index, rywSub).length];
      if (held[0] || held[1]) log(`step ${step.index + 1}: held back by pending blocks, read ${((Date.now() - stepEnd) / 1000).toFixed(0)} s after the step: ${held[0]} stream, ${held[1]} subscription messages`);
      found(readYourWrites('stream-read-your-writes', seen, step.index, now.stream, ryw.markers));
      found(readYourWrites('subscription-read-your-writes', seen, step.index, now.sub, rywSub));
      stepsRun++;
      log(`step ${step.index + 1}/${plan.length}: ${describeStep(step).replace(/^step \d+: /, '')}; ${ledger.entries.length} requests, ${Math.round((Date.now() - t0) / 1000)} s, ${violations.length} violations`);
    }
    stepsEnded = Date.now();

    // The drain: no faults, no latency; the schedules' time passes, the poison queue is settled,
    // the work queue and the dead letters are read to the end.
    w.injector.set(undefined);
    w.injector.clearLatency();
    ledger.step = stepsRun;
    const lastRun = Math.max(0, ...seen.schedules.map((s) => s.startAt));
    const phases: string[] = [];
    const phase = async <T>(name: string, f: () => Promise<T>): Promise<T> => {
      const t = Date.now();
      const out = await f();
      phases.push(`${name} ${((Date.now() - t) / 1000).toFixed(1)} s`);
      return out;
    };
    await seen.hooks.stopDead?.();
    // Webhook deliveries: every message of the healthy endpoint and of the replays answered 2xx.
    const posts = w.receivers.posts;
    const hookDone = () => {
      // What the checkers read: the healthy endpoint's (/ok) 2xx, and the replays' endpoint's
      // (a 2xx at /flaky does not deliver a message to /ok).
      const ok = new Set(posts.filter((p) => p.status >= 200 && p.status < 300 && (p.path === '/ok' || p.path === '/replay')).map((p) => p.marker));
      const slow = new Set(posts.filter((p) => p.status >= 200 && p.status < 300 && p.path === '/slow').map((p) => p.marker));
      return [...ledger.promised.values()].every((p) => !p.topic.startsWith(`${names.root}/k/`) || (ok.has(p.marker) && slow.has(p.marker))) && seen.hooks.replayMarkers.every((m) => ok.has(m));
    };
    // Replays queued while the replay webhook's circuit was open wait for its next probe, at most
    // the longest probe gap after the last failed one (its timeout, 10 s, and 60 s: docs/webhooks.md
    // "Endpoint health"); the probe's success releases the rest at once.
    const hookDrainMs = 20_000 + probeHoldMs(10, Infinity);
    await phase('webhooks', async () => {
      for (let t = Date.now(); Date.now() - t < hookDrainMs && !hookDone(); ) await sleep(500);
    });
    const poisonEmpty = async () => (await w.sqsCount(names.poison)) === 0;
    // The queues that dead-letter: a settle whose dead-lettering failed in a step leaves its
    // messages hidden for the settle's visibility (they reappear then, as documented), so their
    // drains wait that long for a message to come back before they call the queue idle.
    const settled = { idleMs: (SETTLE_VISIBILITY_SECONDS + 10) * 1000, ms: (SETTLE_VISIBILITY_SECONDS + 40) * 1000 };
    await phase('poison', () => drainQueue(ledger, names.poison, { ack: false, visibility: 1, ...settled, empty: poisonEmpty }));
    const drained = await phase('work', () => drainQueue(ledger, names.work, { ack: true, visibility: 30, ms: 120_000, empty: async () => (await w.sqsCount(names.work)) === 0 }));
    await phase('fifo', () => drainFifo(w, seen.fifo, stepsRun));
    const rd = names.redrive;
    const redriven = await phase('redrive', async () => {
      await drainQueue(ledger, rd.source, { ack: false, visibility: 1, ...settled, consumers: 2, empty: async () => (await w.sqsCount(rd.source)) === 0 });
      // Until the dead-letter queue is empty in SQS: a batch a failed call of a step hid comes back
      // after the redrive's visibility.
      await redriveAll(w, seen.redrive, stepsRun, 40, { empty: async () => (await w.sqsCount(rd.dead)) === 0, ms: (REDRIVE_VISIBILITY_SECONDS + 10) * 1000 });
      return drainQueue(ledger, rd.target, { ack: true, visibility: 30, ms: 60_000, consumers: 2, idleMs: 5000, empty: async () => (await w.sqsCount(rd.target)) === 0 });
    });
    // Young queues: what the step's consumers left (a failed ack, a message they did not reach).
    const young = await phase('young queues', async () => {
      const got: { marker: string; queue: string }[] = [];
      for (const q of seen.young.queues) {
        const d = await drainQueue(ledger, q.name, { ack: true, visibility: 30, ms: 60_000, consumers: 2, idleMs: 8000, empty: async () => (await w.sqsCount(q.name, true)) === 0 });
        got.push(...d.map(([marker]) => ({ marker, queue: q.name })));
      }
      if (seen.young.skipped.length) log(`young queues not judged (a create or delete not answered 2xx): ${seen.young.skipped.join(', ')}`);
      return got;
    });
    // Readers stop before a block whose publish could not clear its reservation (a clearing that
    // failed in a step) until the settle time after it (docs/streams-and-subscriptions.md "Readers
    // wait for a publish's block", at most 35 s): the logs are read once it has passed, as settled.
    await phase('settle', () => sleep(Math.max(0, stepsEnded + PENDING_SETTLE_MS + 2000 - Date.now())));
    // Chunk puts held until their blocks were settled (./actors-streams.ts `lateChunkRule`) land
    // before the final reads.
    const lateSettled = await phase('late chunks', async () => {
      const out = await Promise.all(seen.lateChunks.map((l) => l.released));
      await sleep(seen.lateChunks.length ? 2000 : 0);
      return out;
    });
    await phase('subscribers', () => drainSubscribers(w, seen.subscribers, stepsRun));
    const dead = await phase('dead letters', () => drainQueue(ledger, names.dead, { ack: true, visibility: 30, ms: 120_000, empty: async () => (await w.sqsCount(names.dead)) === 0 }));
    if (lastRun) await phase('schedules', () => sleep(Math.max(0, lastRun + 4000 - Date.now())));
    await w.stopTimers();
    await phase('ticks', () => w.tickAll());
    log(`drained in ${Math.round((Date.now() - stepsEnded) / 1000)} s (${phases.join(', ')})`);

    // Final reads.
    const full: StreamReader = { markers: [], next: 0 };
    await readStream(ledger, names.stream, 'final', full);
    const sub = await readSubscription(ledger, names.subscription, 'final');
    const sched: StreamReader = { markers: [], next: 0 };
    await readStream(ledger, names.schedStream, 'final', sched);
    const schedIds: string[] = [];
    const schedSub = await readSubscription(ledger, names.schedSubscription, 'final', schedIds);
    const states = new Map<string, { last_run_at: string | null; last_error: unknown; claim?: string }>();
    for (let i = 0; i < seen.schedules.length; i += 25) {
      await Promise.all(
        seen.schedules.slice(i, i + 25).map(async (s) => {
          const a = await ledger.call('checker', 'GET', `/schedules/${s.name}`);
          // A run not made: its claim as stored, in the evidence (a claim still held says a tick has it).
          if (a.status === 200) states.set(s.name, { ...a.body!.data, ...(a.body!.data.last_run_at === null ? { claim: await w.scheduleClaim(s.name) } : {}) });
        }),
      );
    }
    const workUrl = await w.sqsUrl(names.work);
    found(exactlyOnceInLog('stream', ledger, `${names.root}/s/`, full.markers));
    found(exactlyOnceInLog('subscription', ledger, `${names.root}/s/`, sub));
    found(idempotency(seen));
    found(workQueue(ledger, seen, `${names.root}/w/`, drained.map(([m]) => m), (id) => w.injector.copiesOf(workUrl, id)));
    found(deadLetteredOnce(ledger, seen, dead));
    found(fifoQueue(ledger, seen.fifo, `${names.root}/f/`));
    found(streamGroups(seen.streamGroups.pages, await readOffsets(ledger, names.stream)));
    // Counts against reads: a chunk held past its block's settle (./actors-streams.ts
    // `lateChunkRule`) lands inside a gap, which readers must pass as the count does.
    const inGaps = { stream: await w.storedInGaps('stream', names.stream), subscription: await w.storedInGaps('subscription', names.subscription) };
    const lateStep = Math.min(stepsRun, ...seen.lateChunks.map((l) => l.step));
    if (seen.lateChunks.length) log(`late chunks: ${seen.lateChunks.map((l, i) => `${l.table} step ${l.step} ${lateSettled[i] ? 'landed after its block was settled' : 'not settled: landed after the wait'}`).join(', ')}; messages stored inside settled gaps: stream ${inGaps.stream}, subscription ${inGaps.subscription}`);
    const detail = (kind: 'stream' | 'subscription') => `messages stored inside its gaps: ${inGaps[kind]}; late chunk puts: ${seen.lateChunks.filter((l) => l.table === (kind === 'stream' ? 'streamLog' : 'subscriptionLog')).length}`;
    found(countsAgree('stream-count-vs-read', names.stream, (await ledger.call('checker', 'GET', `/streams/${names.stream}`)).body?.data?.message_count, full.markers.length, lateStep, detail('stream')));
    found(countsAgree('subscription-count-vs-read', names.subscription, (await ledger.call('checker', 'GET', `/subscriptions/${names.subscription}`)).body?.data?.message_count, sub.length, lateStep, detail('subscription')));
    found(subscribersOnce(ledger, seen.subscribers, `${names.root}/s/`, sub));
    found(redrivenOnce(ledger, seen.redrive, redriven));
    found(youngQueues(seen.young, young));
    found(schedulesRanOnce(seen, sched.markers, states, schedSub.map((m, i) => [m, schedIds[i]])));

    // Counters, once settled: the quiet-queue reconciliation as the sweeper runs it 8 minutes on.
    // A cancel answered 5xx is retried first, as the answer tells a client to (its room may not
    // be given back yet); the truth counts the held messages the service still holds (a
    // handed-over one is in SQS's count).
    for (const id of seen.cancelUnsure) {
      for (let i = 0; i < 5; i++) {
        const c = await ledger.call('canceller', 'DELETE', `/messages/${id}/delivery`);
        if (c.status === 200) seen.cancelled.add(id);
        if (c.status < 500) break;
      }
    }
    const heldIds = [...seen.held.keys()];
    // What the service holds for the queue, also of a held publish answered 5xx whose message was
    // kept (at least once: it is delivered when due), which the 201s alone would miss.
    const heldTruth = async () => {
      const kept = await w.heldInTable(names.held);
      return heldQueueTruth(await w.sqsCount(names.held), kept, new Map(kept.map((id) => [id, 'held' as const])));
    };
    const heldStep = () => Math.min(...[...seen.held.values()]);
    const sweptAt = Date.now() + QUIET_MS + RECONCILE_EVERY_MS;
    await sweep(sweptAt);
    const held = await w.heldStates(heldIds, names.held);
    const stillHeld = heldIds.filter((id) => held.get(id) === 'held');
    for (const q of [names.work, names.poison, names.dead, names.held]) {
      const a = await ledger.call('checker', 'GET', `/queues/${q}`);
      const isHeld = q === names.held;
      const truth = isHeld ? await heldTruth() : await w.sqsCount(q);
      const detail = isHeld ? await w.heldCounters(q, sweptAt, held) : undefined;
      found(countEquals(isHeld && stillHeld.length ? 'held-count-after-reconcile' : 'queue-count-after-reconcile', q, 'after the reconciliation', a.body?.data?.message_count, truth, isHeld && seen.held.size ? heldStep() : stepsRun, detail));
    }
    // A cancel after the reconciliation.
    const toCancel = stillHeld[0];
    if (toCancel) {
      const c = await ledger.call('checker', 'DELETE', `/messages/${toCancel}/delivery`);
      if (c.status === 200) seen.cancelled.add(toCancel);
      const a = await ledger.call('checker', 'GET', `/queues/${names.held}`);
      found(countEquals('held-count-after-cancel', names.held, 'after a cancel', a.body?.data?.message_count, await heldTruth(), seen.held.get(toCancel)!));
    }
    const deadStatus = await ledger.call('checker', 'GET', `/webhooks/${names.hooks.dead}/status`);
    found(deadDisabled(posts, deadStatus.body?.data?.status, 45_000, Date.now(), seen.hooks.deadStep ?? 0));
    const jobCopies = (id: string) => w.injector.copiesOf(w.webhooks.queueUrl, id);
    found(noPostAfter2xx(ledger, posts, ['/ok', '/flaky', '/rate'], 'webhook-post-after-2xx', jobCopies));
    // The places webhook is judged without the copies' exemption: a copy of a handed job must wait
    // for a place, given back only once the first copy's attempt is recorded, and then reads it.
    found(noPostAfter2xx(ledger, posts, ['/slow'], 'place-post-after-2xx'));
    found(noPostAfter2xx(ledger, posts, ['/replay'], 'replay-post-after-2xx'));
    found(delivered(ledger, posts, `${names.root}/k/`, '/ok'));
    found(delivered(ledger, posts, `${names.root}/k/`, '/slow'));
    found(placesHold(ledger, posts, '/slow', PLACES));
    found(replayedOnce(ledger, posts, seen.hooks));
    found(rateHolds(posts, seen.hooks));
    found(envelopes(w.api.violations));
    found(answersDocumented(ledger.entries));
    if (w.timerErrors.length) found([{ checker: 'ticks-never-fail', step: 0, count: w.timerErrors.length, evidence: w.timerErrors.slice(0, 3).join('; ') }]);
  } finally {
    await w.stop();
  }
  return {
    seed: o.seed,
    plan,
    stepsRun,
    requests: ledger.entries.length,
    seconds: { steps: (stepsEnded - t0) / 1000, total: (Date.now() - t0) / 1000 },
    tally: ledger.tally(),
    violations: violations.map((v) => ({ ...v, known: KNOWN_DEFECTS[v.checker] })),
    firstSeen,
    sdk: { calls: w.injector.stats.calls, delayed: w.injector.delayed, failed: w.injector.stats.callsFailed },
  };
}

/** A failure as the report prints it: seed, step, checker, evidence and the history up to the step. */
export function describeViolation(r: SimResult, v: Violation & { known?: KnownDefect }): string {
  const history = r.plan.filter((s) => s.index <= v.step).map(describeStep);
  return [
    `${v.known ? `known (issue ${v.known.issue})` : 'NEW'} ${v.checker} at seed ${r.seed} step ${v.step}: ${v.evidence}`,
    ...(v.known ? [] : [`  replay: npm run simulate -- --seed ${r.seed} --steps ${v.step + 1}`, ...history.map((h) => `  ${h}`)]),
  ].join('\n');
}
