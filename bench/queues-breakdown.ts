/**
 * Where a message's write units go at batch 10 (the cost targets of docs/performance.md): publish,
 * consume and ack of `n` messages through the real gateway on DynamoDB Local, each phase's write
 * units per message by partition key pattern (namespace, ids and minute windows folded), and its
 * DynamoDB calls. `npx tsx bench/queues-breakdown.ts [messages]`.
 */
import { pathToFileURL } from 'node:url';
import { expectStatus, runConcurrent, startBenchEnv, type BenchEnv } from './harness';

const fold = (k: string) =>
  k.replace(/bench-[0-9a-f]+/g, '{ns}').replace(/[0-9A-HJKMNP-TV-Z]{26}/g, '{id}').replace(/#\d{6,}/g, '#{n}').replace(/:[^:]*-(meta|queues|[a-z]+)-[0-9a-f]+:/, ':');

function report(env: BenchEnv, phase: string, messages: number): Record<string, number> {
  const byKey = new Map<string, number>();
  for (const [k, v] of env.meter.keyWrites) byKey.set(fold(k), (byKey.get(fold(k)) ?? 0) + v);
  const snap = env.meter.snapshot();
  const rows = Object.fromEntries([...byKey].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, Math.round((v / messages) * 1000) / 1000]));
  console.log(JSON.stringify({ phase, writeUnitsPerMessage: snap.writeUnits / messages, readUnitsPerMessage: snap.readUnits / messages, calls: snap.calls, sqs: snap.sqsRequests, byKey: rows }, null, 1));
  return rows;
}

async function breakdown(messages = 300, batch = 10) {
  const env = await startBenchEnv((l) => console.error(l));
  try {
    const topic = 'bench/breakdown';
    expectStatus(await env.call('POST', '/queues', { name: 'breakdown', topic_filter: topic }), 201, 'create');
    env.meter.reset();
    await runConcurrent(messages / batch, 4, async () => {
      const r = await env.call('POST', `/topics/${topic}/messages/batch`, { messages: Array.from({ length: batch }, () => ({ payload: 'x'.repeat(256) })) });
      expectStatus(r, 201, 'publish');
    });
    report(env, 'publish', messages);
    let consumed = 0;
    const acks: { message_id: string; receipt_handle: string }[][] = [];
    env.meter.reset();
    while (consumed < messages) {
      const c = await env.call<{ messages: { message_id: string; receipt_handle: string }[] }>('POST', '/queues/breakdown/messages/consume', { max_messages: batch, visibility_timeout_seconds: 120 });
      expectStatus(c, 200, 'consume');
      consumed += c.body.data.messages.length;
      acks.push(c.body.data.messages);
    }
    report(env, 'consume', messages);
    env.meter.reset();
    for (const got of acks) {
      const a = await env.call('POST', '/queues/breakdown/messages/ack', { entries: got.map((m) => ({ message_id: m.message_id, receipt_handle: m.receipt_handle })) });
      expectStatus(a, 200, 'ack');
    }
    report(env, 'ack', messages);
  } finally {
    await env.stop();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  breakdown(Number(process.argv[2] ?? 300)).catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
