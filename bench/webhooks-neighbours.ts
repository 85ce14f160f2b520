/**
 * A slow neighbour at a fixed offered load (docs/performance.md: "a slow receiver must not reduce
 * another webhook's deliveries per second by more than 10 %"). Called by bench/webhooks.ts inside
 * its environment (publish path, delivery queue and event source).
 *
 * A 0 ms webhook is offered a fixed publish rate below the machine's capacity, in three
 * conditions: alone; beside another 0 ms webhook of the same namespace offered the same rate (the
 * control); beside a 200 ms webhook of the same namespace offered the same rate. Alone and beside
 * the slow one it should deliver the offered rate, with its latency unchanged. The conditions
 * alternate in rounds, so a load that moves during the bench loads each alike.
 *
 * Why not the saturated rate (a backlog of each): locally one Node process runs the gateway, the
 * handlers and fauxqs beside one DynamoDB Local on shared cores, so a second webhook, fast or
 * slow, takes CPU from the first; and one namespace's batches over its share (5 of the local event
 * source's 8 pollers) are put back for 2 to 5 s, so a backlog's rate depends on how those
 * deferrals fall at its end. Both say little of AWS, where each invocation has its own CPU.
 */
import { receiver } from './receiver';
import { expectStatus, latencyStats, type BenchEnv } from './harness';
import { drained, offer, type OfferTarget } from './offered-load';

/** The slow neighbour's answer time (ms). */
export const SLOW_MS = 200;

interface NeighbourCondition {
  condition: 'alone' | 'beside 0 ms' | `beside ${number} ms`;
  /** The 0 ms webhook's deliveries per second in the steady part of the publishing windows (from 5 s after the first publish to the last). */
  fastPerSecond: number;
  fastP50Ms: number;
  fastP99Ms: number;
  /** The neighbour's deliveries per second within the same windows (0 alone). */
  neighbourPerSecond: number;
  /** Over both webhooks' deliveries: SQS send requests (publish and deferrals) and jobs received (1 + deferrals) per delivery. */
  sqsSendsPerDelivery: number;
  jobsReceivedPerDelivery: number;
  /** The 0 ms webhook's own jobs received per delivery: above 1, some of its jobs were put back over a share. */
  fastJobsReceivedPerDelivery: number;
}

export interface NeighbourRun {
  /** Publish rate offered to each webhook (messages per second). */
  offeredPerSecond: number;
  /** Seconds of publishing per condition and round. */
  windowSeconds: number;
  rounds: number;
  conditions: NeighbourCondition[];
  /** The fast webhook's rate beside the slow one against the control, and against alone (%). */
  reductionVsControlPercent: number;
  reductionVsAlonePercent: number;
}

interface Target extends OfferTarget {
  arrivals: number[];
  latencies: number[];
}

/** A receiver whose deliveries are recorded on `t`: arrival time, id and latency from its publish. */
const targetReceiver = (t: Target, delayMs: number) =>
  receiver((id) => {
    const now = performance.now();
    t.arrivals.push(now);
    t.received.add(id);
    const sent = t.sentAt.get(id);
    if (sent !== undefined) t.latencies.push(now - sent);
  }, delayMs);

/** The steady state starts this long after the first publish: the longest wait of a job put back over its namespace's share (lambda/webhooks/share.ts `deferSeconds`). */
const WARM_MS = 5000;

/**
 * The three conditions at `perSecond` offered to each webhook, `rounds` rounds of `windowSeconds`
 * each. Rates count arrivals in the steady part of the publishing window (from WARM_MS after its
 * first publish to its last: a deferral's wait shows in the latency, not in the rate); every published message must arrive before the next condition starts.
 */
export async function benchNeighbours(
  env: BenchEnv,
  { perSecond = 40, windowSeconds = 20, rounds = 2, jobsReceived = (_?: string) => 0, log = (_: string): void => undefined }: { perSecond?: number; windowSeconds?: number; rounds?: number; jobsReceived?: (webhookName?: string) => number; log?: (l: string) => void } = {},
): Promise<NeighbourRun> {
  const mk = (topic: string): Target => ({ topic, call: env.call, arrivals: [], latencies: [], sentAt: new Map(), received: new Set() });
  const fast = mk('bench/nb-fast');
  const peer = mk('bench/nb-peer');
  const slow = mk('bench/nb-slow');
  const servers = await Promise.all([targetReceiver(fast, 0), targetReceiver(peer, 0), targetReceiver(slow, SLOW_MS)]);
  const names = ['bench-nb-fast', 'bench-nb-peer', 'bench-nb-slow'];
  const conditions: { name: NeighbourCondition['condition']; neighbour?: Target }[] = [
    { name: 'alone' },
    { name: 'beside 0 ms', neighbour: peer },
    { name: `beside ${SLOW_MS} ms`, neighbour: slow },
  ];
  const sums = conditions.map(() => ({ fast: 0, neighbour: 0, seconds: 0, latencies: [] as number[], published: 0, sends: 0, jobs: 0, fastPublished: 0, fastJobs: 0 }));
  const sqsSends = () => Object.entries(env.meter.snapshot().sqsRequests).filter(([a]) => a.startsWith('SendMessage')).reduce((x, [, v]) => x + v, 0);
  try {
    for (const [i, t] of [fast, peer, slow].entries()) {
      expectStatus(await env.call('POST', '/webhooks', { name: names[i], url: servers[i].url, topic_filter: t.topic }), 201, `create ${names[i]}`);
    }
    for (let r = 0; r < rounds; r++) {
      for (const [ci, c] of conditions.entries()) {
        log(`webhooks: neighbours round ${r + 1} of ${rounds}: 0 ms webhook ${c.name}, ${perSecond}/s offered each for ${windowSeconds} s`);
        const targets = c.neighbour ? [fast, c.neighbour] : [fast];
        const from = fast.latencies.length;
        const [published0, sends0, jobs0] = [targets.reduce((n, t) => n + t.sentAt.size, 0), sqsSends(), jobsReceived()];
        const [fastPublished0, fastJobs0] = [fast.sentAt.size, jobsReceived(names[0])];
        const t0 = performance.now();
        await offer(targets, perSecond, windowSeconds);
        const t1 = t0 + windowSeconds * 1000;
        await drained(targets, 120_000, 100, 'neighbour deliveries');
        // Steady state only: from WARM_MS after the first publish (a job put back over its
        // namespace's share waits 2 to 5 s) to the last publish.
        const within = (x: Target) => x.arrivals.filter((a) => a >= t0 + WARM_MS && a < t1).length;
        sums[ci].fast += within(fast);
        sums[ci].neighbour += c.neighbour ? within(c.neighbour) : 0;
        sums[ci].seconds += windowSeconds - WARM_MS / 1000;
        sums[ci].latencies.push(...fast.latencies.slice(from));
        sums[ci].published += targets.reduce((n, t) => n + t.sentAt.size, 0) - published0;
        sums[ci].sends += sqsSends() - sends0;
        sums[ci].jobs += jobsReceived() - jobs0;
        sums[ci].fastPublished += fast.sentAt.size - fastPublished0;
        sums[ci].fastJobs += jobsReceived(names[0]) - fastJobs0;
      }
    }
    const rows: NeighbourCondition[] = conditions.map((c, i) => {
      const l = latencyStats(sums[i].latencies);
      return {
        condition: c.name,
        fastPerSecond: Math.round((sums[i].fast / sums[i].seconds) * 10) / 10,
        fastP50Ms: l.p50Ms,
        fastP99Ms: l.p99Ms,
        neighbourPerSecond: Math.round((sums[i].neighbour / sums[i].seconds) * 10) / 10,
        sqsSendsPerDelivery: Math.round((sums[i].sends / Math.max(1, sums[i].published)) * 1000) / 1000,
        jobsReceivedPerDelivery: Math.round((sums[i].jobs / Math.max(1, sums[i].published)) * 1000) / 1000,
        fastJobsReceivedPerDelivery: Math.round((sums[i].fastJobs / Math.max(1, sums[i].fastPublished)) * 1000) / 1000,
      };
    });
    const pct = (a: number, b: number) => Math.round((1 - a / b) * 1000) / 10;
    return {
      offeredPerSecond: perSecond,
      windowSeconds,
      rounds,
      conditions: rows,
      reductionVsControlPercent: pct(rows[2].fastPerSecond, rows[1].fastPerSecond),
      reductionVsAlonePercent: pct(rows[2].fastPerSecond, rows[0].fastPerSecond),
    };
  } finally {
    for (const n of names) await env.call('DELETE', `/webhooks/${n}`);
    for (const s of servers) {
      s.server.closeAllConnections();
      await new Promise<void>((r) => s.server.close(() => r()));
    }
  }
}

export function neighbourTable(r: NeighbourRun): string {
  return [
    `| 0 ms webhook, ${r.offeredPerSecond}/s offered | delivered /s | p50 ms | p99 ms | its jobs received/delivery | neighbour delivered /s | both: SQS sends/delivery | both: jobs received/delivery |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...r.conditions.map((c) => `| ${c.condition} | ${c.fastPerSecond} | ${c.fastP50Ms} | ${c.fastP99Ms} | ${c.fastJobsReceivedPerDelivery} | ${c.condition === 'alone' ? '' : c.neighbourPerSecond} | ${c.sqsSendsPerDelivery} | ${c.jobsReceivedPerDelivery} |`),
    '',
    `Reduction of the 0 ms webhook's delivered rate by the ${SLOW_MS} ms neighbour: ${r.reductionVsControlPercent} % against the 0 ms control, ${r.reductionVsAlonePercent} % against alone (target: at most 10 %; negative: it delivered more). Method: each webhook of the same namespace is offered ${r.offeredPerSecond} messages a second (batches of 10 on a fixed schedule), below the local capacity, for ${r.windowSeconds} s per condition; the conditions alternate in ${r.rounds} rounds; rates count arrivals in the steady part of each window (from 5 s after its first publish, the longest wait of a job put back over the namespace's share, to its last publish), latency is publish start to arrival, and every message arrived before the next condition began. "Its jobs received" counts the 0 ms webhook's own jobs handed to the delivery function per delivery (above 1: some were put back over a share and waited 2 to 5 s); "both" counts SQS sends and jobs received per delivery of the two webhooks (publishes of 10 send 0.1 per delivery; each deferral sends again and is received again).`,
  ].join('\n');
}
