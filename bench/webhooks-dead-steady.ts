/**
 * A dead endpoint under steady traffic (docs/performance.md: "a dead endpoint at 1 message/s for 10
 * minutes: disabled when its thresholds say; SQS receives per parked delivery <= 2; Step Functions
 * transitions per retried delivery <= 6"). Runs alone, in real time (the service has no clock of
 * its own to speed up):
 *
 *   npx tsx bench/webhooks-dead-steady.ts [seconds=600] [perSecond=1] [disableAfter=300] [retryCount=2]
 *
 * One webhook whose endpoint answers 500 to every request (failure_threshold 100, so
 * `disable_after` is the threshold that applies within the run) gets `perSecond` messages a second
 * for `seconds`. The delivery queue, the local event source (the stack's mapping: fair-queue rule, pollers scaling as Lambda's) and the
 * retry workflow (the stack's ASL on aws-local-stepfunctions) are the stack's, as in
 * bench/webhooks.ts. Counted: each job's hand-outs to the delivery function (SQS receives), the
 * retry executions started and their billed transitions (states entered and Task retries), the
 * endpoint's requests, and when the webhook was disabled against its first failed request.
 */
import { createServer } from 'node:http';
import { expectStatus, runToExit, startBenchEnv } from './harness';
import { startDeliveryPath } from './offered-load';

async function main() {
  const [seconds = 600, perSecond = 1, disableAfter = 300, retryCount = 2] = process.argv.slice(2, 6).map(Number);
  const log = (l: string) => process.stderr.write(`${l}\n`);
  const env = await startBenchEnv(log);
  const { jobMessageId } = await import('../lambda/webhooks/rules/delivery');
  /** SQS receives per message (its jobs handed to the delivery function), and probe tickets. */
  const handed = new Map<string, number>();
  let tickets = 0;
  const delivery = await startDeliveryPath('bench-dead', (records) => {
    for (const r of records) {
      const j = JSON.parse(r.body) as { probe_ticket?: number; message?: { message_id?: string }; message_ref?: { message_id?: string } };
      const id = j.message?.message_id ?? j.message_ref?.message_id;
      if (j.probe_ticket !== undefined) tickets++;
      else if (id) handed.set(id, (handed.get(id) ?? 0) + 1);
    }
  });
  const { workflow } = delivery;
  let executions = 0;
  // A retry held by the circuit goes back to the queue and its next failure starts another
  // execution: the target counts per delivery, so the deliveries are counted apart.
  const retried = new Set<string>();
  const start = workflow.start.bind(workflow);
  workflow.start = async (name, input) => {
    const r = await start(name, input);
    if (r === 'started') {
      executions++;
      retried.add(jobMessageId(input.job));
    }
    return r;
  };
  const requests: number[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests.push(performance.now());
      res.writeHead(500).end('down');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
  try {
    const name = 'bench-dead-steady';
    expectStatus(await env.call('POST', '/webhooks', { name, url, topic_filter: 'bench/dead-steady', retry_count: retryCount, failure_threshold: 100, disable_after: disableAfter }), 201, 'create webhook');
    log(`dead endpoint: ${perSecond}/s for ${seconds} s, retry_count ${retryCount}, disable_after ${disableAfter} s`);
    const t0 = performance.now();
    let disabledAt: number | undefined;
    const published: string[] = [];
    const every = 1000 / perSecond;
    for (let k = 0; k < Math.round(seconds * perSecond); k++) {
      await new Promise((r) => setTimeout(r, Math.max(0, t0 + k * every - performance.now())));
      const res = await env.call('POST', '/topics/bench/dead-steady/messages', { payload: `{"k":${k}}` });
      expectStatus(res, 201, 'publish');
      published.push((res.body.data as { message_id: string }).message_id);
      if (disabledAt === undefined && k % 5 === 0 && (await env.call('GET', `/webhooks/${name}`)).body.data?.status === 'disabled') disabledAt = performance.now();
      if (k % 60 === 0) log(`dead endpoint: ${k} published, ${requests.length} requests, ${executions} retry executions, ${tickets} probe tickets`);
    }
    // Every delivery ended (counted failed), and the retry executions with them.
    const deadline = performance.now() + 300_000;
    for (;;) {
      const s = (await env.call('GET', `/webhooks/${name}/status`)).body.data as { success_count: number; failure_count: number };
      if (s.success_count + s.failure_count >= published.length && workflow.running === 0) break;
      if (performance.now() > deadline) throw new Error(`bench: ${s.failure_count} of ${published.length} deliveries ended after 300 s`);
      await new Promise((r) => setTimeout(r, 1000));
    }
    const counts = published.map((id) => handed.get(id) ?? 0);
    const held = counts.filter((n) => n > 1);
    const mean = (xs: number[]) => Math.round((xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)) * 100) / 100;
    const firstFail = requests[0];
    process.stdout.write(
      [
        `Dead endpoint, ${perSecond} message/s for ${seconds} s, retry_count ${retryCount}, failure_threshold 100, disable_after ${disableAfter} s.`,
        '',
        '| published | endpoint requests | disabled after its first failed request s | SQS receives per delivery (mean / max) | deliveries received more than once | their receives (mean) | probe tickets received | retry executions | retried deliveries | transitions | transitions per execution | transitions per retried delivery |',
        '|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|',
        `| ${published.length} | ${requests.length} | ${disabledAt === undefined ? 'not disabled' : Math.round((disabledAt - firstFail) / 100) / 10} | ${mean(counts)} / ${Math.max(...counts)} | ${held.length} | ${mean(held)} | ${tickets} | ${executions} | ${retried.size} | ${workflow.transitions} | ${executions ? Math.round((workflow.transitions / executions) * 10) / 10 : '-'} | ${retried.size ? Math.round((workflow.transitions / retried.size) * 10) / 10 : '-'} |`,
        '',
      ].join('\n'),
    );
  } finally {
    await delivery.stop();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    await env.stop();
  }
}

runToExit(main);
