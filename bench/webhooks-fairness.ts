/**
 * A slow neighbour in another namespace (docs/performance.md: "beside another namespace's 5 s
 * receiver, a 0 ms webhook's p99 publish-to-request stays within 2× its p99 alone").
 *
 * From `npm run bench` (the section bench-webhooks-fairness, `--only webhooks-fairness`): the
 * namespace share as the service takes it where MSG_WEBHOOK_NAMESPACE_SHARE is unset, 20 messages
 * a second, 15 s windows, 2 rounds at scale 1 (`--scale 0.2`: 5 s windows, 1 round). Alone, for
 * the comparisons of design record 19:
 *
 *   MSG_WEBHOOK_NAMESPACE_SHARE=100000 npx tsx bench/webhooks-fairness.ts [perSecond] [windowSeconds] [rounds] [same]
 *
 * (the share unset: today's default share; set beyond reach: fair queues only). A 0 ms webhook of
 * one namespace is offered `perSecond` messages a second (batches of 10 on a fixed schedule) for
 * `windowSeconds`, alone, then beside a 5 s webhook of another namespace offered the same rate
 * (`same`: a 5 s webhook of its own namespace instead); the conditions alternate in `rounds`
 * rounds and every delivery arrives before the next condition starts. The delivery queue, the
 * local event source (the stack's mapping: pollers scaling as Lambda's, the fair-queue rule of local/fair-queues.ts) and the
 * delivery handler are the stack's, as in bench/webhooks.ts. A 5 s warm-up of the 0 ms webhook
 * alone comes first, not measured.
 * Prints the 0 ms webhook's p50/p99 publish-to-request in each condition, the ratio of its p99s,
 * the slow webhook's deliveries per second, each webhook's jobs handed to the delivery function
 * per delivery, and whether the target was met.
 */
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { receiver } from './receiver';
import { benchClient, expectStatus, latencyStats, runToExit, startBenchEnv, type BenchEnv } from './harness';
import { drained, offer, startDeliveryPath, type OfferTarget } from './offered-load';
import { SLOW_MS, fairnessTable, type FairnessCondition, type FairnessRun } from './webhooks-fairness-table';

const FAST = 'fair-fast';
/** How long the neighbour runs before the beside condition's window (s). */
const NEIGHBOUR_LEAD_S = 10;
const SLOW = 'fair-slow';

interface Target extends OfferTarget {
  latencies: number[];
}

async function benchFairness({
  perSecond = 20,
  windowSeconds = 15,
  rounds = 2,
  sameNamespace = false,
  log = (_: string): void => undefined,
}: { perSecond?: number; windowSeconds?: number; rounds?: number; sameNamespace?: boolean; log?: (l: string) => void } = {}): Promise<FairnessRun> {
  const env = await startBenchEnv(log);
  const { applySeed } = await import('../local/seed');
  const { config } = await import('../lambda/core/config');
  // Where the 0 ms webhook's slowest deliveries waited: each job's hand-outs to the delivery
  // function (more than one: it was put back over a share, 2 to 5 s) and its first hand-out's time
  // (a late one: it waited on the queue behind other jobs); and every job handed out, per webhook.
  const handed = new Map<string, { n: number; first: number }>();
  const jobs = new Map<string, number>();
  const delivery = await startDeliveryPath('bench-fair', (records) => {
    const at = performance.now();
    for (const r of records) {
      const j = JSON.parse(r.body) as { webhook_name?: string; message?: { message_id?: string }; message_ref?: { message_id?: string } };
      if (j.webhook_name) jobs.set(j.webhook_name, (jobs.get(j.webhook_name) ?? 0) + 1);
      const id = j.message?.message_id ?? j.message_ref?.message_id;
      if (j.webhook_name !== FAST || !id) continue;
      const h = handed.get(id);
      if (h) h.n++;
      else handed.set(id, { n: 1, first: at });
    }
  });

  const other = `bench-slow-${randomBytes(3).toString('hex')}`;
  const otherKey = `${other}-key-${randomBytes(8).toString('hex')}`;
  await applySeed({ namespaces: [{ name: other, limits: { publish: 1e8, consume: 1e8, management: 1e8 }, keys: [{ key: otherKey, scopes: ['*'] }] }] });
  const slowClient = benchClient(env.baseUrl, otherKey);
  const mk = (topic: string, call: BenchEnv['call']): Target => ({ topic, call, sentAt: new Map(), latencies: [], received: new Set() });
  const fast = mk('bench/fair-fast', env.call);
  const slow = mk('bench/fair-slow', sameNamespace ? env.call : slowClient.call);
  /** The 0 ms webhook's deliveries: publish, first hand-out and arrival (ms since the bench began). */
  const trace: { id: string; sent: number; latency: number }[] = [];
  const hit = (t: Target) => (id: string) => {
    t.received.add(id);
    const s = t.sentAt.get(id);
    if (s === undefined) return;
    t.latencies.push(performance.now() - s);
    if (t === fast) trace.push({ id, sent: s, latency: performance.now() - s });
  };
  const servers = await Promise.all([receiver(hit(fast), 0), receiver(hit(slow), SLOW_MS)]);
  try {
    expectStatus(await fast.call('POST', '/webhooks', { name: FAST, url: servers[0].url, topic_filter: fast.topic }), 201, 'create fast');
    expectStatus(await slow.call('POST', '/webhooks', { name: SLOW, url: servers[1].url, topic_filter: slow.topic, timeout: 15 }), 201, 'create slow');
    const neighbour = `${sameNamespace ? 'a' : "another namespace's"} ${SLOW_MS / 1000} s webhook${sameNamespace ? ' of its namespace' : ''}`;
    // Beside: the neighbour has run NEIGHBOUR_LEAD_S already (the mapping has scaled to it);
    // appearing: both start together (the mapping scales up, with cold starts, while measured).
    const conditions = [
      { name: 'alone', targets: [fast], lead: 0 },
      { name: `beside ${neighbour}`, targets: [fast, slow], lead: NEIGHBOUR_LEAD_S },
      { name: `as ${neighbour} appears`, targets: [fast, slow], lead: 0 },
    ];
    const sums = conditions.map(() => ({ latencies: [] as number[], slowDelivered: 0, seconds: 0, traced: [] as typeof trace, fastJobs: 0, slowJobs: 0, fastPublished: 0, slowPublished: 0 }));
    // Warm-up, not measured: the first seconds of a fresh DynamoDB Local and of the handlers' first
    // calls are seconds slower than the rest.
    log('fairness: warm-up, 5 s alone');
    await offer([fast], perSecond, 5);
    await drained([fast], 120_000, 200);
    for (let r = 0; r < rounds; r++) {
      for (const [i, c] of conditions.entries()) {
        log(`fairness: round ${r + 1} of ${rounds}: 0 ms webhook ${c.name}, ${perSecond}/s offered each for ${windowSeconds} s`);
        const from = fast.latencies.length;
        const traceFrom = trace.length;
        const [slowFrom, fastJobs0, slowJobs0, fastSent0, slowSent0] = [slow.received.size, jobs.get(FAST) ?? 0, jobs.get(SLOW) ?? 0, fast.sentAt.size, slow.sentAt.size];
        const t0 = performance.now();
        if (c.lead) {
          const neighbourOffer = offer([slow], perSecond, c.lead + windowSeconds);
          await new Promise((r) => setTimeout(r, c.lead * 1000));
          await Promise.all([offer([fast], perSecond, windowSeconds), neighbourOffer]);
        } else await offer(c.targets, perSecond, windowSeconds);
        await drained(c.targets, 600_000, 200);
        const s = sums[i];
        s.latencies.push(...fast.latencies.slice(from));
        s.traced.push(...trace.slice(traceFrom));
        s.slowDelivered += slow.received.size - slowFrom;
        s.seconds += (performance.now() - t0) / 1000;
        s.fastJobs += (jobs.get(FAST) ?? 0) - fastJobs0;
        s.slowJobs += (jobs.get(SLOW) ?? 0) - slowJobs0;
        s.fastPublished += fast.sentAt.size - fastSent0;
        s.slowPublished += slow.sentAt.size - slowSent0;
      }
    }
    // The slowest 1 % of a condition's deliveries: how many were handed out more than once, and
    // their mean wait before the first hand-out and from it to the request.
    const tail = (ds: typeof trace) => {
      const worst = [...ds].sort((a, b) => b.latency - a.latency).slice(0, Math.max(1, Math.ceil(ds.length / 100)));
      const hs = worst.map((d) => ({ d, h: handed.get(d.id) }));
      const mean = (xs: number[]) => Math.round(xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length));
      const put = hs.filter(({ h }) => (h?.n ?? 0) > 1).length;
      return `${put} of ${worst.length} / ${mean(hs.map(({ d, h }) => (h ? h.first - d.sent : 0)))} / ${mean(hs.map(({ d, h }) => (h ? d.sent + d.latency - h.first : 0)))}`;
    };
    const per = (a: number, b: number, d: number) => Math.round((a / Math.max(1, b)) * d) / d;
    const rows = conditions.map((c, i): FairnessCondition => {
      const l = latencyStats(sums[i].latencies);
      const s = sums[i];
      return {
        condition: c.name,
        p50Ms: l.p50Ms,
        p99Ms: l.p99Ms,
        slowPerSecond: i ? Math.round((s.slowDelivered / s.seconds) * 10) / 10 : undefined,
        fastJobsReceivedPerDelivery: per(s.fastJobs, s.fastPublished, 1000),
        slowJobsReceivedPerDelivery: i ? per(s.slowJobs, s.slowPublished, 1000) : undefined,
        tail: tail(s.traced),
      };
    });
    return { share: config().webhookNamespaceShare, perSecond, windowSeconds, rounds, sameNamespace, batchesAtOnce: delivery.events.peakBusy, neighbourLeadSeconds: NEIGHBOUR_LEAD_S, conditions: [rows[0], rows[1], rows[2]] };
  } finally {
    await delivery.stop();
    slowClient.agent.destroy();
    for (const s of servers) {
      s.server.closeAllConnections();
      await new Promise<void>((r) => s.server.close(() => r()));
    }
    await env.stop();
  }
}

/**
 * The section `npm run bench` prints: the share on, at the value the service takes where
 * MSG_WEBHOOK_NAMESPACE_SHARE is unset (the stack always sets one, a quarter of its batches' jobs;
 * lambda/core/config.ts), so a share set for a comparison never ends up in the stored figures.
 */
/** @public bench/run.ts imports it by name (`npm run bench -- --figures`). */
export async function benchMarkdown({ scale, log }: { scale: number; log: (l: string) => void }): Promise<string> {
  if (process.env.MSG_WEBHOOK_NAMESPACE_SHARE) {
    throw new Error('bench-webhooks-fairness stores the namespace share the service takes where MSG_WEBHOOK_NAMESPACE_SHARE is unset; unset it, or run bench/webhooks-fairness.ts alone for another share');
  }
  const r = await benchFairness({ perSecond: 20, windowSeconds: Math.max(5, Math.round(15 * scale)), rounds: Math.max(1, Math.round(2 * Math.min(1, scale))), log });
  return ['### Fairness between namespaces', fairnessTable(r)].join('\n\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runToExit(async () => {
    const [perSecond = 20, windowSeconds = 15, rounds = 2] = process.argv.slice(2, 5).map(Number);
    const r = await benchFairness({ perSecond, windowSeconds, rounds, sameNamespace: process.argv[5] === 'same', log: (l) => process.stderr.write(`${l}\n`) });
    process.stdout.write(`${fairnessTable(r)}\n`);
  });
}
