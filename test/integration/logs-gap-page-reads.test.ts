/**
 * Attack on "read cost stays bounded": a consume whose range crosses the span of spilled gaps
 * (`sg_s`..`sg_e`) Queries the gap pages below its end (storage/log-gaps.ts `absentIn`), from the
 * first page on: pages whose gaps all lie before the reader's position are read too, on every read,
 * so the read grows with the failed publishes of the whole retention, not with what it answers.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { appendToStreams } from '../../lambda/storage/stream-log';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { headOf, logApi, published, streamBinding, unstorable } from '../fixtures/logs';
import { HEAD_MAX_GAPS } from '../../lambda/domain/retention';
import { ddb } from '../../lambda/storage/client';
import type { Binding } from '../../lambda/storage/resources';

jest.setTimeout(300_000);

let server: TestServer;
let ns: TestNamespace;
let logs: ReturnType<typeof logApi>;

beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('gappages');
  logs = logApi(client(server.baseUrl, ns.key));
});
afterAll(() => server.close());

/** Gap page items read by the Queries `run` makes. */
async function pageItemsRead(run: () => Promise<unknown>): Promise<number> {
  const c = ddb();
  const send = c.send.bind(c);
  let items = 0;
  jest.spyOn(c, 'send').mockImplementation((async (cmd: unknown, ...rest: unknown[]) => {
    const out = await (send as (x: unknown, ...r: unknown[]) => Promise<{ Items?: unknown[] }>)(cmd, ...rest);
    if (cmd instanceof QueryCommand && cmd.input.ExpressionAttributeValues?.[':lo'] === 'GAPS#') items += out.Items?.length ?? 0;
    return out;
  }) as never);
  try {
    await run();
  } finally {
    jest.restoreAllMocks();
  }
  return items;
}

it('a reader past most spilled gaps reads only the pages that may hold a gap at or after its position', async () => {
  const { name } = await logs.stream({ partition_count: 1 });
  const { s, binding } = await streamBinding(ns.name, name);
  const at = () => ({ namespace: ns.name, now: Date.now() });
  const fail = async (times: number) => {
    for (let i = 0; i < times; i++) await expect(appendToStreams(at(), [binding as Binding], [unstorable(Date.now())])).rejects.toThrow();
  };
  const old = 4 * (HEAD_MAX_GAPS + 1); // four pages of old failed publishes
  await fail(old);
  await appendToStreams(at(), [binding as Binding], [published('m', Date.now())]); // at position `old`
  await fail(HEAD_MAX_GAPS + 1); // one more page, after the reader's position
  const head = (await headOf(ns.name, s.id))!;
  // Pages spilled before and after the reader's position: the read crosses the spilled span.
  expect({ before: head.sg_s! < old, after: head.sg_e! > old }).toEqual({ before: true, after: true });
  let got: string[] = [];
  const items = await pageItemsRead(async () => {
    got = (await logs.read(name, { consumer_group: 'tail', start_offset: old })).messages.map((m) => m.payload);
  });
  // The one page whose gaps lie after the reader's position (and perhaps the one straddling it).
  expect({ got, items }).toEqual({ got: ['m'], items: expect.any(Number) });
  expect(items).toBeLessThanOrEqual(2);
});
