/**
 * A slow neighbour in another namespace (docs/performance.md: "beside another namespace's 5 s
 * receiver, a 0 ms webhook's p99 publish-to-request stays within 2× its p99 alone"). Runs alone:
 *
 *   MSG_WEBHOOK_NAMESPACE_SHARE=100000 npx tsx bench/webhooks-fairness.ts [perSecond] [windowSeconds] [rounds] [same]
 *
 * (the share unset: today's default share; set beyond reach: fair queues only). A 0 ms webhook of
 * one namespace is offered `perSecond` messages a second (batches of 10 on a fixed schedule) for
 * `windowSeconds`, alone, then beside a 5 s webhook of another namespace offered the same rate
 * (`same`: a 5 s webhook of its own namespace instead); the conditions alternate in `rounds`
 * rounds and every delivery arrives before the next condition starts. The delivery queue, the local event source (8 batches at once, the fair-queue
 * rule of local/fair-queues.ts) and the delivery handler are the stack's, as in bench/webhooks.ts.
 * A 5 s warm-up of the 0 ms webhook alone comes first, not measured.
 * Prints the 0 ms webhook's p50/p99 publish-to-request in each condition, and the slow webhook's
 * deliveries per second.
 */
import { randomBytes } from 'node:crypto';
import { receiver } from './receiver';
import { benchClient, expectStatus, latencyStats, runToExit, startBenchEnv, type BenchEnv } from './harness';
import { drained, offer, startDeliveryPath, type OfferTarget } from './offered-load';

const SLOW_MS = 5000;

interface Target extends OfferTarget {
  latencies: number[];
}

async function main() {
  const [perSecond = 20, windowSeconds = 15, rounds = 2] = process.argv.slice(2, 5).map(Number);
  // `same`: the 5 s webhook in the 0 ms webhook's own namespace instead of another.
  const sameNamespace = process.argv[5] === 'same';
  const log = (l: string) => process.stderr.write(`${l}\n`);
  const env = await startBenchEnv(log);
  const { applySeed } = await import('../local/seed');
  const { config } = await import('../lambda/core/config');
  // Where the 0 ms webhook's slowest deliveries waited: each job's hand-outs to the delivery
  // function (more than one: it was put back over a share, 2 to 5 s) and its first hand-out's time
  // (a late one: it waited on the queue behind other jobs).
  const handed = new Map<string, { n: number; first: number }>();
  const delivery = await startDeliveryPath('bench-fair', (records) => {
    const at = performance.now();
    for (const r of records) {
      const j = JSON.parse(r.body) as { webhook_name?: string; message?: { message_id?: string }; message_ref?: { message_id?: string } };
      const id = j.message?.message_id ?? j.message_ref?.message_id;
      if (j.webhook_name !== 'fair-fast' || !id) continue;
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
  expectStatus(await fast.call('POST', '/webhooks', { name: 'fair-fast', url: servers[0].url, topic_filter: fast.topic }), 201, 'create fast');
  expectStatus(await slow.call('POST', '/webhooks', { name: 'fair-slow', url: servers[1].url, topic_filter: slow.topic, timeout: 15 }), 201, 'create slow');

  const conditions = [
    { name: 'alone', targets: [fast] },
    { name: `beside ${sameNamespace ? 'a' : "another namespace's"} ${SLOW_MS} ms webhook${sameNamespace ? ' of its namespace' : ''}`, targets: [fast, slow] },
  ];
  const sums = conditions.map(() => ({ latencies: [] as number[], slowDelivered: 0, seconds: 0, traced: [] as typeof trace }));
  try {
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
        const slowFrom = slow.received.size;
        const t0 = performance.now();
        await offer(c.targets, perSecond, windowSeconds);
        await drained(c.targets, 600_000, 200);
        sums[i].latencies.push(...fast.latencies.slice(from));
        sums[i].traced.push(...trace.slice(traceFrom));
        sums[i].slowDelivered += slow.received.size - slowFrom;
        sums[i].seconds += (performance.now() - t0) / 1000;
      }
    }
    const share = config().webhookNamespaceShare;
    // The slowest 1 % of a condition's deliveries: how many were handed out more than once, and
    // their mean wait before the first hand-out and from it to the request.
    const tail = (ds: typeof trace) => {
      const worst = [...ds].sort((a, b) => b.latency - a.latency).slice(0, Math.max(1, Math.ceil(ds.length / 100)));
      const hs = worst.map((d) => ({ d, h: handed.get(d.id) }));
      const mean = (xs: number[]) => Math.round(xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length));
      const put = hs.filter(({ h }) => (h?.n ?? 0) > 1).length;
      return `${put} of ${worst.length} / ${mean(hs.map(({ d, h }) => (h ? h.first - d.sent : 0)))} / ${mean(hs.map(({ d, h }) => (h ? d.sent + d.latency - h.first : 0)))}`;
    };
    const rows = conditions.map((c, i) => {
      const l = latencyStats(sums[i].latencies);
      return `| ${c.name} | ${l.p50Ms} | ${l.p99Ms} | ${i ? Math.round((sums[i].slowDelivered / sums[i].seconds) * 10) / 10 : ''} | ${tail(sums[i].traced)} |`;
    });
    process.stdout.write(
      [
        `Namespace share ${share} (MSG_WEBHOOK_NAMESPACE_SHARE), ${perSecond}/s offered to each webhook for ${windowSeconds} s, ${rounds} rounds, 8 local delivery batches at once.`,
        '',
        `| 0 ms webhook | p50 ms | p99 ms | ${SLOW_MS} ms webhook delivered /s (until drained) | its slowest 1 %: put back / mean ms to first hand-out / mean ms after it |`,
        '|---|---:|---:|---:|---|',
        ...rows,
        '',
      ].join('\n'),
    );
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

runToExit(main);
