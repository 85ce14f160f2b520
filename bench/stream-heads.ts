/**
 * A stream's read sizing and head load, on DynamoDB Local through the real local gateway:
 *
 * - mixed-size history: 64 partitions, `tiny` messages of a few bytes (through the publish sink in
 *   calls of 500) then `large` of 100 KB (one call each), and one consume of `max_messages` 1000
 *   from the first large one: chunk bytes its Queries returned (payload and 64 bytes a message),
 *   read units, Queries, and the bytes it answered;
 * - head write units per publish call (batch of 10 keyed messages, 64 partitions) with 1, 25 and
 *   100 calls in flight, the head's size after, and the publish calls a second one log sustains in
 *   AWS by arithmetic (a partition key takes about 1,000 write units a second), and the bytes of
 *   the largest head's biggest attributes (name and value as JSON); the write units per call of
 *   the stream's partition marks item, on a key of its own;
 * - the same with exactly `held` reservations in flight (0, 25, 100): the calls above overlap as
 *   the loaded machine lets them (a run "at 100 in flight" held 45 to 75 reservations at once, so
 *   its figure moves from run to run), while in AWS 100 calls in flight are 100 reservations on the
 *   head. Here the head is given `held` fresh reservations shaped as a publish of the same batch
 *   makes them (lambda/logs/storage/log-reservations.ts: their positions, bytes and reservation numbers
 *   reserved, no record yet; a `pending` entry each on a head made before reservation records),
 *   then `calls` publish calls (at most 50) are sent one at a time.
 *
 * Run: `npx tsx bench/stream-heads.ts [tiny] [large] [calls]` (defaults 20000 256 300).
 */
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { startBenchEnv } from './harness';
import { meterTables } from './key-meter';

const r3 = (n: number) => Math.round(n * 1000) / 1000;
const KEY_WRITE_UNITS_PER_SECOND = 1000;

async function benchStreamHeads({ tiny = 20_000, large = 256, calls = 300, log = (_: string): unknown => undefined } = {}) {
  const env = await startBenchEnv((l) => log(l));
  try {
    const { ddb, tableName } = await import('../lambda/core/storage/client');
    const { getStream } = await import('../lambda/streams/storage/streams');
    const { appendToStreams } = await import('../lambda/streams/storage/stream-log');
    const { getHeadForPurge } = await import('../lambda/logs/storage/log-heads');
    const { UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
    const { metaKeys } = await import('../lambda/core/storage/keys');
    const { pendingToken } = await import('../lambda/logs/rules/log-horizon');
    const { meter } = await meterTables();
    const logBytes = { queries: 0, bytes: 0 };
    ddb().middlewareStack.add(
      (next, context) => async (args) => {
        const out = await next(args);
        if (context.commandName === 'QueryCommand' && (args.input as { TableName?: string }).TableName === tableName('streamLog')) {
          logBytes.queries++;
          for (const item of (out.output as { Items?: { b: number; m: unknown[] }[] }).Items ?? []) logBytes.bytes += item.b + 64 * item.m.length;
        }
        return out;
      },
      { step: 'initialize', name: 'benchLogBytes' },
    );
    const api = async (method: string, path: string, body?: unknown) => {
      const r = await env.call(method, path, body);
      if (r.status >= 300) throw new Error(`${method} ${path} answered ${r.status}: ${JSON.stringify(r.body.error)}`);
      return r.body.data;
    };
    const stream = async (name: string) => {
      await api('POST', '/streams', { name, topic_filter: `bench/${name}`, partition_count: 64 });
      const s = (await getStream(env.namespace, name))!;
      return { s, binding: { kind: 'STREAM' as const, name, id: s.id, topic_filter: `bench/${name}`, settings: { partition_count: 64, retention_days: 7, marks: 'item' as const } } };
    };
    const message = (payload: string, i: number) => ({ message_id: `m${i}`, topic: 't', payload, content_type: 'application/json', properties: {}, published_at: Date.now(), size: payload.length });

    // Mixed-size history.
    const mixed = await stream('mixed');
    for (let i = 0; i < tiny; i += 500) await appendToStreams({ namespace: env.namespace, now: Date.now() }, [mixed.binding], Array.from({ length: Math.min(500, tiny - i) }, (_, j) => message(`t${j}`, i + j)));
    const big = 'x'.repeat(100_000);
    for (let i = 0; i < large; i += 8) await Promise.all(Array.from({ length: Math.min(8, large - i) }, (_, j) => appendToStreams({ namespace: env.namespace, now: Date.now() }, [mixed.binding], [message(big, i + j)])));
    meter.reset();
    logBytes.queries = 0;
    logBytes.bytes = 0;
    const read = await api('POST', '/streams/mixed/messages/consume', { consumer_group: 'b', start_offset: tiny, max_messages: 1000, timeout_seconds: 0 });
    const answered = (read.messages as { payload: string }[]).reduce((n, m) => n + m.payload.length + 64, 0);
    const mixedRead = { tiny, large, messages: read.count as number, answeredMb: r3(answered / 1e6), readMb: r3(logBytes.bytes / 1e6), readRatio: r3(logBytes.bytes / Math.max(1, answered)), queries: logBytes.queries, readUnits: meter.snapshot().readUnits };
    log(`mixed-size read: ${JSON.stringify(mixedRead)}`);

    // Head write units per publish call by calls in flight.
    const head: Record<string, { calls: number; headWriteUnitsPerCall: number; marksWriteUnitsPerCall: number; recordsWriteUnitsPerCall: number; headBytes: number; callsPerSecondByArithmetic: number; fieldBytes: Record<string, number> }> = {};
    for (const inFlight of [1, 25, 100]) {
      const name = `heads${inFlight}`;
      const { s } = await stream(name);
      meter.reset();
      let sent = 0;
      let peakBytes = 0;
      let fieldBytes: Record<string, number> = {};
      await Promise.all(Array.from({ length: inFlight }, async () => {
        while (sent < calls) {
          sent++;
          await api('POST', `/topics/bench/${name}/messages/batch`, { messages: Array.from({ length: 10 }, (_, k) => ({ payload: 'x'.repeat(64), partition_key: `k${(sent * 10 + k) % 997}` })) });
          if (sent % 25 !== 0) continue;
          const h = await getHeadForPurge({ namespace: env.namespace, id: s.id }); // the head item alone, without the marks item
          const bytes = Buffer.byteLength(JSON.stringify(h), 'utf8');
          if (bytes <= peakBytes) continue;
          peakBytes = bytes;
          // What each attribute holds at the largest head seen (its name and value as JSON).
          fieldBytes = Object.fromEntries(Object.entries(h ?? {}).map(([k, v]) => [k, Buffer.byteLength(k + JSON.stringify(v), 'utf8')]).sort((a, b) => Number(b[1]) - Number(a[1])).slice(0, 6));
        }
      }));
      const snap = meter.snapshot();
      const key = Object.keys(snap.writesByKey).find((k) => k.includes(`#LOG#${s.id}`));
      const perCall = r3((key ? snap.writesByKey[key] : 0) / calls);
      // The partition marks' own key (lambda/logs/storage/partition-marks.ts), 0 when they are on the head.
      const marksKey = Object.keys(snap.writesByKey).find((k) => k.includes(`#MARKS#${s.id}`));
      // The reservation records' own key (lambda/logs/storage/log-records.ts), 0 before them.
      const recordsKey = Object.keys(snap.writesByKey).find((k) => k.includes(`#RESV#${s.id}`));
      head[String(inFlight)] = { calls, headWriteUnitsPerCall: perCall, marksWriteUnitsPerCall: r3((marksKey ? snap.writesByKey[marksKey] : 0) / calls), recordsWriteUnitsPerCall: r3((recordsKey ? snap.writesByKey[recordsKey] : 0) / calls), headBytes: peakBytes, callsPerSecondByArithmetic: Math.round(KEY_WRITE_UNITS_PER_SECOND / Math.max(0.001, perCall)), fieldBytes };
      log(`head at ${inFlight} in flight: ${JSON.stringify(head[String(inFlight)])}`);
    }

    // Head write units per publish call with exactly `held` reservations in flight.
    const headHeld: Record<string, { calls: number; headWriteUnitsPerCall: number; recordsWriteUnitsPerCall: number; headBytes: number; callsPerSecondByArithmetic: number }> = {};
    const batch = () => Array.from({ length: 10 }, (_, k) => ({ payload: 'x'.repeat(64), partition_key: `k${k}` }));
    for (const held of [0, 25, 100]) {
      const name = `held${held}`;
      const { s } = await stream(name);
      const ref = { namespace: env.namespace, id: s.id };
      // One call first, so the head holds what a publishing log's does.
      await api('POST', `/topics/bench/${name}/messages/batch`, { messages: batch() });
      const before = (await getHeadForPurge(ref))!;
      const pending: Record<string, number> = {};
      for (let i = 0; i < held; i++) {
        const token = pendingToken(Date.now() + i, { count: 10, bytes: 640 }, randomBytes(6).toString('base64url'));
        pending[token] = before.next + 10 * i;
      }
      // With reservation records (lambda/logs/storage/log-records.ts), a reservation in flight is a number
      // reserved on the head without its record; before them, a `pending` entry on the head.
      const records = before.seq !== undefined;
      await ddb().send(
        new UpdateCommand({
          TableName: tableName('meta'),
          Key: metaKeys.logHead(env.namespace, s.id),
          UpdateExpression: `SET #next = #next + :n, next_bytes = next_bytes + :b, ${records ? 'seq = seq + :h' : 'pending = :p'}`,
          ExpressionAttributeNames: { '#next': 'next' },
          ExpressionAttributeValues: { ':n': 10 * held, ':b': 640 * held, ...(records ? { ':h': held } : { ':p': pending }) },
        }),
      );
      meter.reset();
      const heldCalls = Math.min(calls, 50);
      for (let c = 0; c < heldCalls; c++) await api('POST', `/topics/bench/${name}/messages/batch`, { messages: batch() });
      const snap = meter.snapshot();
      const key = Object.keys(snap.writesByKey).find((k) => k.includes(`#LOG#${s.id}`));
      const perCall = r3((key ? snap.writesByKey[key] : 0) / heldCalls);
      const h = await getHeadForPurge(ref);
      const recordsKey = Object.keys(snap.writesByKey).find((k) => k.includes(`#RESV#${s.id}`));
      headHeld[String(held)] = { calls: heldCalls, headWriteUnitsPerCall: perCall, recordsWriteUnitsPerCall: r3((recordsKey ? snap.writesByKey[recordsKey] : 0) / heldCalls), headBytes: Buffer.byteLength(JSON.stringify(h), 'utf8'), callsPerSecondByArithmetic: Math.round(KEY_WRITE_UNITS_PER_SECOND / Math.max(0.001, perCall)) };
      log(`head with ${held} reservations held: ${JSON.stringify(headHeld[String(held)])}`);
    }
    return { mixedRead, head, headHeld };
  } finally {
    await env.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [tiny, large, calls] = process.argv.slice(2).map(Number);
  benchStreamHeads({ tiny: tiny || undefined, large: large || undefined, calls: calls || undefined, log: (l) => process.stderr.write(`${l}\n`) })
    .then((r) => process.stdout.write(`${JSON.stringify(r, null, 2)}\n`))
    .catch((e) => {
      process.stderr.write(`bench failed: ${(e as Error).stack}\n`);
      process.exitCode = 1;
    });
}
