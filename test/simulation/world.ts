/**
 * The simulated deployment: the real local gateway and handlers, webhook delivery with its retry
 * workflow (a real SFNClient into the local runner), the sweeper and the scheduler tick on timers
 * as `npm start` runs them, all on the engines the caller started (DynamoDB Local and fauxqs, with
 * the harsh layer on). The fault injector sits on the real SDK clients of this process; nothing is
 * mocked. One namespace per run, its bindings created before any fault is on.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { queueUrl, sqsClient } from '../../lambda/core/adapters/sqs';
import { setRetryWorkflow, StepFunctionsRetryWorkflow } from '../../lambda/webhooks/storage/retry-workflow';
import { getQueue, getQueueCounters } from '../../lambda/queues/storage/queues';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, dynamoClient, tableName } from '../../lambda/core/storage/client';
import { heldStates as heldStatesOf, PACK_PREFIX } from '../../lambda/schedules/storage/held-packs';
import { getSchedule } from '../../lambda/schedules/storage/schedules';
import type { HeldState } from './checkers';
import { getStream } from '../../lambda/streams/storage/streams';
import { getSubscription } from '../../lambda/subscriptions/storage/subscriptions';
import { getHeadForPurge } from '../../lambda/logs/storage/log-heads';
import { allGapPages } from '../../lambda/logs/storage/log-gap-pages';
import { storedIn } from '../../lambda/logs/storage/log-chunks';
import { streamLogKey } from '../../lambda/streams/storage/stream-log';
import { sweepStream } from '../../lambda/streams/sweep';
import { sweepSubscription } from '../../lambda/subscriptions/sweep';
import { sweep } from '../../lambda/sweeper/tasks';
import { handler as schedulerHandler } from '../../lambda/handlers/scheduler';
import { startLocalWebhooks, type LocalWebhooks } from '../../local/webhooks';
import { lambdaContext } from '../../local/lambda-context';
import { startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { ApiClient } from '../faults/api';
import { FaultInjector } from '../faults/injector';
import { LOCAL_STATE_MACHINE_ARN, localSfnClient } from '../faults/local-sfn';
import { Ledger } from './ledger';
import { startReceivers, type Receivers } from './receivers';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The `places` webhook's `max_in_flight` (./checkers-webhooks.ts `placesHold`). */
export const PLACES = 4;

/** Names of the run's bindings; every topic is under `root`. */
interface Names {
  root: string;
  /** Stream and subscription on `{root}/s/#`. */
  stream: string;
  subscription: string;
  /** Work queue on `{root}/w/#`; the counted queue (held messages) on `{root}/h/#`. */
  work: string;
  held: string;
  /** `max_retries` 0 queue on `{root}/p/#`, dead-lettering to `{root}/dead/p`, read by `dead`. */
  poison: string;
  dead: string;
  /** Stream and subscription of the schedules' runs, on `{root}/t/#` (the subscription names message ids). */
  schedStream: string;
  schedSubscription: string;
  /** Ordered (FIFO) queue on `{root}/f/#`, `max_retries` 1000 (a message is never dropped for its receives). */
  fifo: string;
  /** Redrive chain: `source` (`max_retries` 0, on `{root}/rq/#`) dead-letters to `dead` (`{root}/rdead/#`), redriven to `{root}/rr/x`, read by `target`. */
  redrive: { source: string; dead: string; target: string };
  /**
   * Webhooks: `ok` (/ok) and `flaky` (/flaky) on `{root}/k/#`, `dead` (/dead, failure_threshold 3)
   * on `{root}/dd/#`, `replay` (/replay, retry_count 0) on `{root}/rp/#`, `rate` (/rate) on `{root}/rt/#`,
   * `places` (/slow, max_in_flight {@link PLACES}) on `{root}/k/#`.
   */
  hooks: { ok: string; flaky: string; dead: string; replay: string; rate: string; places: string };
}

export interface World {
  names: Names;
  ledger: Ledger;
  api: ApiClient;
  injector: FaultInjector;
  webhooks: LocalWebhooks;
  receivers: Receivers;
  /** A client the injector never touches, for the truth SQS holds. */
  clean: SQSClient;
  /** The queue's SQS URL, looked up once (`fresh`: again, for a queue created again under its name). */
  sqsUrl(queue: string, fresh?: boolean): Promise<string>;
  /** Visible + in flight + delayed, as SQS counts them. */
  sqsCount(queue: string, fresh?: boolean): Promise<number>;
  /** Where the service has each held message for `queue` (its scheduler item, read strongly consistent). */
  heldStates(ids: string[], queue: string): Promise<Map<string, HeldState>>;
  /** The ids of the messages the service holds for `queue` (pending or claimed, not handed to it), also of publishes not answered 201 (at least once: they are delivered). */
  heldInTable(queue: string): Promise<string[]>;
  /** A held queue's counters as stored and the service's held items for it, for a count's evidence. */
  heldCounters(queue: string, sweptAt: number, states: Map<string, HeldState>): Promise<string>;
  /** A schedule's claim as stored (the API does not show it): why a run is not made yet. */
  scheduleClaim(name: string): Promise<string>;
  /** Messages a log stores inside its gaps (chunks that landed after their blocks were settled), read from the tables. */
  storedInGaps(kind: 'stream' | 'subscription', name: string): Promise<number>;
  /** Whether position `position` of log `id` is inside a gap, on its head or a gap page, or below its `earliest` (a gap there is dropped). */
  inGap(id: string, position: number): Promise<boolean>;
  /** One sweeper visit of the stream and the subscription on `{root}/s/#` (settles their dead reservations). */
  sweepLogs(): Promise<void>;
  /** The sweeper and the scheduler tick, once each, at `now`. */
  tickAll(now?: number): Promise<void>;
  /** Stops the timers (the drain runs its own ticks), once the round each is in has ended. */
  stopTimers(): Promise<void>;
  /** Sweeper and tick errors of `tickAll` (called without faults: a tick must not fail then). */
  timerErrors: string[];
  stop(): Promise<void>;
}

export interface WorldOptions {
  seed: number;
  /** Share of DynamoDB and SQS calls that fail (the fault suite's policy), 0 to turn faults off. */
  faultShare: number;
}

async function expect2xx(ledger: Ledger, method: string, path: string, body: unknown) {
  const a = await ledger.call('setup', method, path, body);
  if (a.status >= 300) throw new Error(`setup ${method} ${path}: ${a.status} ${a.code} ${a.body?.error?.message ?? ''}`);
  return a.body?.data;
}

/**
 * Runs `f` every `ms`, one round at a time (a round still running skips its turn); the stop
 * returned waits for the round in flight, so what is read after it sees every run that round made.
 */
export function repeat(ms: number, f: () => Promise<unknown>): () => Promise<void> {
  let running: Promise<void> | undefined;
  const t = setInterval(() => {
    if (running) return;
    // A tick that fails under injected faults fails its invocation, and the next one retries
    // (as EventBridge invokes again): not a finding.
    running = f().then(
      () => undefined,
      () => undefined,
    ).finally(() => {
      running = undefined;
    });
  }, ms);
  return async () => {
    clearInterval(t);
    await running;
  };
}

export async function startWorld(o: WorldOptions): Promise<World> {
  const server: TestServer = await startTestServer();
  // A delivery job's visibility of 30 s (the stack's is 6 minutes): the drain waits on POSTs, not
  // on jobs coming back, and a shorter one let a batch slowed by a loaded machine be handed out
  // again while it still ran (a second POST the service did not decide).
  const webhooks = await startLocalWebhooks({ queueName: `sim-${randomBytes(4).toString('hex')}`, visibilitySeconds: 30 });
  const sfn = localSfnClient(webhooks.workflow);
  setRetryWorkflow(new StepFunctionsRetryWorkflow(sfn, LOCAL_STATE_MACHINE_ARN));
  const ns = await createTestNamespace('sim');
  const api = new ApiClient(server.baseUrl, ns.key, 400, false);
  const ledger = new Ledger(api);
  const clean = new SQSClient({ region: 'us-east-1', endpoint: process.env.MSG_SQS_ENDPOINT, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const r = `r${randomBytes(3).toString('hex')}`;
  const hooks = { ok: `${r}-hk-ok`, flaky: `${r}-hk-flaky`, dead: `${r}-hk-dead`, replay: `${r}-hk-replay`, rate: `${r}-hk-rate`, places: `${r}-hk-places` };
  const names: Names = { root: r, stream: `${r}-s`, subscription: `${r}-u`, work: `${r}-w`, held: `${r}-h`, poison: `${r}-p`, dead: `${r}-d`, schedStream: `${r}-t`, schedSubscription: `${r}-tu`, fifo: `${r}-f`, redrive: { source: `${r}-rq`, dead: `${r}-rd`, target: `${r}-rr` }, hooks };
  const receivers = await startReceivers(o.seed);
  /** A log's gaps, on its head and its gap pages, read from the table. */
  const gapsOf = async (id: string) => {
    const ref = { namespace: ns.name, id };
    const [head, pages] = await Promise.all([getHeadForPurge(ref), allGapPages(ref)]);
    return [...Object.entries(head?.gaps ?? {}), ...pages.flatMap((p) => Object.entries(p.g))];
  };
  const fast = { retry_delay: 1, backoff_multiplier: 1 };
  await expect2xx(ledger, 'POST', '/webhooks', { name: hooks.ok, url: `${receivers.url}/ok`, topic_filter: `${r}/k/#`, retry_count: 2, ...fast });
  await expect2xx(ledger, 'POST', '/webhooks', { name: hooks.flaky, url: `${receivers.url}/flaky`, topic_filter: `${r}/k/#`, timeout: 5, retry_count: 3, ...fast });
  await expect2xx(ledger, 'POST', '/webhooks', { name: hooks.dead, url: `${receivers.url}/dead`, topic_filter: `${r}/dd/#`, retry_count: 2, failure_threshold: 3, ...fast });
  await expect2xx(ledger, 'POST', '/webhooks', { name: hooks.replay, url: `${receivers.url}/replay`, topic_filter: `${r}/rp/#`, retry_count: 0 });
  await expect2xx(ledger, 'POST', '/webhooks', { name: hooks.rate, url: `${receivers.url}/rate`, topic_filter: `${r}/rt/#`, rate_limit: 10 });
  // Every publish to {root}/k/ waits for one of its places: bursts of up to 100 meet them at once.
  // Its timeout leaves a batch (30 s here: the delivery queue's visibility) the time to run the
  // deliveries its attempts hand places to (lambda/webhooks/place-wait.ts InlineRuns).
  await expect2xx(ledger, 'POST', '/webhooks', { name: hooks.places, url: `${receivers.url}/slow`, topic_filter: `${r}/k/#`, max_in_flight: PLACES, retry_count: 2, timeout: 5, ...fast });
  await expect2xx(ledger, 'POST', '/streams', { name: names.stream, topic_filter: `${r}/s/#`, partition_count: 2 });
  await expect2xx(ledger, 'POST', '/subscriptions', { name: names.subscription, topic_filter: `${r}/s/#` });
  await expect2xx(ledger, 'POST', '/queues', { name: names.work, topic_filter: `${r}/w/#` });
  await expect2xx(ledger, 'POST', '/queues', { name: names.held, topic_filter: `${r}/h/#` });
  await expect2xx(ledger, 'POST', '/queues', { name: names.dead, topic_filter: `${r}/dead/#` });
  await expect2xx(ledger, 'POST', '/queues', { name: names.poison, topic_filter: `${r}/p/#`, max_retries: 0, dead_letter_topic: `${r}/dead/p` });
  await expect2xx(ledger, 'POST', '/queues', { name: names.fifo, topic_filter: `${r}/f/#`, ordering: 'fifo', max_retries: 1000 });
  await expect2xx(ledger, 'POST', '/queues', { name: names.redrive.dead, topic_filter: `${r}/rdead/#` });
  await expect2xx(ledger, 'POST', '/queues', { name: names.redrive.source, topic_filter: `${r}/rq/#`, max_retries: 0, dead_letter_topic: `${r}/rdead/x` });
  await expect2xx(ledger, 'POST', '/queues', { name: names.redrive.target, topic_filter: `${r}/rr/#` });
  await expect2xx(ledger, 'POST', '/streams', { name: names.schedStream, topic_filter: `${r}/t/#`, partition_count: 4 });
  await expect2xx(ledger, 'POST', '/subscriptions', { name: names.schedSubscription, topic_filter: `${r}/t/#` });
  // A new SQS queue is not ready at once (AWS, and the harsh layer: local/aws-harsh/sqs.ts).
  await sleep(1500);

  const urls = new Map<string, string>();
  const sqsUrl = async (queue: string, fresh = false) => {
    if (fresh || !urls.has(queue)) urls.set(queue, queueUrl((await getQueue(ns.name, queue))?.sqs_queue ?? ''));
    return urls.get(queue)!;
  };
  // Every queue's URL is looked up now, before the injector is on: the actors and checkers that
  // read SQS's truth mid-step would otherwise meet an injected DynamoDB fault in the lookup and
  // end the run (seen at 10 % faults: "simulate failed: ServiceUnavailable" from the poison actor).
  for (const q of [names.work, names.held, names.poison, names.dead, names.fifo, names.redrive.source, names.redrive.dead, names.redrive.target]) await sqsUrl(q);
  const injector = new FaultInjector(o.seed);
  injector.attach(dynamoClient(), 'dynamodb');
  injector.attach(sqsClient(), 'sqs');
  injector.attach(sfn, 'sfn');
  if (o.faultShare > 0) injector.set({ share: { dynamodb: o.faultShare, sqs: o.faultShare, sfn: o.faultShare }, afterShare: 0.5, absorbedShare: 0.6 });
  // Some latency everywhere: 5 % of calls take 20 to 400 ms more.
  injector.addLatency({ service: 'dynamodb', ms: [20, 400], share: 0.05 });
  injector.addLatency({ service: 'sqs', ms: [20, 400], share: 0.05 });

  const timerErrors: string[] = [];
  const tickOnce = async (now = Date.now()) => {
    await sweep(now).catch((e: Error) => timerErrors.push(`sweeper: ${e.message}`));
    await (schedulerHandler({}, lambdaContext('scheduler', randomUUID(), 60_000)) as Promise<unknown>).catch((e: Error) => timerErrors.push(`scheduler: ${e.message}`));
  };
  // As local/runtime.ts: the sweeper every 2 s, the tick every 5 s, one at a time each (AWS runs
  // both every minute: lib/constructs/sweeper.ts, lib/constructs/scheduler.ts). Each tick reads all
  // 64 due shards twice (schedules and held messages) whether or not anything is due.
  const stops = [
    repeat(2000, () => sweep(Date.now())),
    repeat(5000, () => schedulerHandler({}, lambdaContext('scheduler', randomUUID(), 60_000)) as Promise<unknown>),
  ];

  /** The namespace's held items for the queue (a scan of the scheduler table, every page, strongly consistent). */
  const heldItems = async (queue: string) => {
    const q = await getQueue(ns.name, queue);
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await ddb().send(new ScanCommand({ TableName: tableName('scheduler'), FilterExpression: 'begins_with(pk, :p) AND sk = :sk', ExpressionAttributeValues: { ':p': `NS#${ns.name}#DELAYED#`, ':sk': '#DELAYED' }, ConsistentRead: true, ExclusiveStartKey: start }));
      items.push(...(out.Items ?? []));
      start = out.LastEvaluatedKey;
    } while (start);
    // A packed message (lambda/schedules/storage/held-packs.ts) is held as its pack is, unless its slot was
    // cancelled or its pack reached the queue for it: seen as an item of its own here.
    const packs = new Map(items.filter((i) => String(i.message_id).startsWith(PACK_PREFIX)).map((p) => [p.pk, p]));
    const ofSlot = (set: unknown, slot: unknown) => new Set([...((set as Set<string> | undefined) ?? [])].filter((e) => e.startsWith(`${slot}:`)).map((e) => e.slice(`${slot}:`.length)));
    const each = items.flatMap((i) => {
      if (String(i.message_id).startsWith(PACK_PREFIX)) return [];
      if (!i.pack || i.state) return [i];
      const p = packs.get(i.pack);
      if (!p || (p.cancelled as Set<number> | undefined)?.has(i.slot as number)) return [];
      return [{ ...p, message_id: i.message_id, handed_to: ofSlot(p.handed_to, i.slot), held_left: ofSlot(p.held_left, i.slot) }];
    });
    return each.filter((i) => !!q && (i.targets as { id: string }[] | undefined)?.some((t) => t.id === q.id) && (i.state === 'pending' || i.state === 'handing') && !(i.handed_to as Set<string> | undefined)?.has(q.id));
  };

  return {
    names,
    ledger,
    api,
    injector,
    webhooks,
    receivers,
    clean,
    sqsUrl,
    async sqsCount(queue, fresh) {
      const a = (await clean.send(new GetQueueAttributesCommand({ QueueUrl: await sqsUrl(queue, fresh), AttributeNames: ['All'] }))).Attributes ?? {};
      return Number(a.ApproximateNumberOfMessages ?? 0) + Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) + Number(a.ApproximateNumberOfMessagesDelayed ?? 0);
    },
    async heldStates(ids, queue) {
      const queueId = (await getQueue(ns.name, queue))?.id;
      const items = await heldStatesOf(ns.name, ids);
      const out = new Map<string, HeldState>();
      for (const i of items) {
        const handed = i.state === 'sent' || (i.state === 'handing' && !!queueId && !!i.handed_to?.has(queueId));
        out.set(i.message_id, handed ? 'handed' : i.state === 'pending' || i.state === 'handing' ? 'held' : 'cancelled');
      }
      return out;
    },
    heldInTable: async (queue) => (await heldItems(queue)).map((i) => String(i.message_id)),
    async heldCounters(queue, sweptAt, states) {
      const q = await getQueue(ns.name, queue);
      if (!q) return 'no queue';
      const c = await getQueueCounters(ns.name, q.id, Date.now());
      const mine = await heldItems(queue);
      const tally = [...states.values()].reduce<Record<string, number>>((t, v) => ({ ...t, [v]: (t[v] ?? 0) + 1 }), {});
      return `counters: total ${c.totals.count}, held ${c.held.count}, ${c.reconciled_at === sweptAt ? 'reconciled' : `not reconciled (changed ${Math.round((sweptAt - c.changed_at) / 1000)} s before the sweep)`}; held items of the queue in the table ${mine.length}${mine.some((i) => (i.held_left as Set<string> | undefined)?.has(q.id)) ? ' (some with held_left)' : ''}; of those answered 201: ${JSON.stringify(tally)}`;
    },
    async sweepLogs() {
      const [s, u] = await Promise.all([getStream(ns.name, names.stream), getSubscription(ns.name, names.subscription)]);
      if (s) await sweepStream(s, { now: Date.now() });
      if (u) await sweepSubscription(u, { now: Date.now() });
    },
    async inGap(id, position) {
      const head = await getHeadForPurge({ namespace: ns.name, id });
      return (head !== undefined && position < head.earliest) || (await gapsOf(id)).some(([end, g]) => g.s <= position && position <= Number(end));
    },
    async storedInGaps(kind, name) {
      const r = kind === 'stream' ? await getStream(ns.name, name) : await getSubscription(ns.name, name);
      if (!r) return 0;
      const gaps = await gapsOf(r.id);
      const logs = 'partition_count' in r ? Array.from({ length: r.partition_count }, (_, p) => streamLogKey(r.id, p)) : [r.id];
      let n = 0;
      for (const [end, g] of gaps) for (const log of logs) n += (await storedIn(kind === 'stream' ? 'streamLog' : 'subscriptionLog', log, g.s, Number(end))).n;
      return n;
    },
    async scheduleClaim(name) {
      const s = await getSchedule(ns.name, name);
      if (!s) return 'no item';
      const at = (ms: number | undefined) => (ms === undefined ? 'none' : `${new Date(ms).toISOString()} (${Math.round((ms - Date.now()) / 1000)} s from the read)`);
      return `next_run_at ${at(s.next_run_at)}, claim_until ${at(s.claim_until)}`;
    },
    tickAll: tickOnce,
    stopTimers: async () => {
      await Promise.all(stops.map((s) => s()));
    },
    timerErrors,
    async stop() {
      await Promise.all(stops.map((s) => s()));
      injector.set(undefined);
      injector.clearLatency();
      await webhooks.stop();
      await receivers.close();
      await server.close();
      api.close();
      clean.destroy();
    },
  };
}
