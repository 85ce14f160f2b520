/**
 * A crowd of long-polling consumes with one subscriber id while messages arrive, on DynamoDB Local
 * behind the harsh layer (a transaction meeting another on the cursor item is cancelled with
 * `TransactionConflict`, as AWS cancels it:
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling).
 * docs/streams-and-subscriptions.md: a subscriber id gets each retained message once, whatever
 * the number of consumes at once; no fault is injected, so every consume answers 200 (contention
 * alone is no passing dependency failure), none returns a message another returned, and a drain
 * afterwards finds the rest.
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';

jest.setTimeout(120_000);

let server: TestServer;
let api: ReturnType<typeof client>;
const uniq = (p: string) => `${p}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;

beforeAll(async () => {
  server = await startTestServer();
  api = client(server.baseUrl, (await createTestNamespace('crowd')).key);
});
afterAll(() => server.close());

const CROWD = Number(process.env.CROWD ?? 100);
const MESSAGES = 40;

it(`${CROWD} long-polling consumes of one subscriber id while messages arrive: all 200, none twice, none lost`, async () => {
  const name = uniq('s');
  const topic = `t/${name}`;
  expect((await api('POST', '/subscriptions', { name, topic_filter: topic })).status).toBe(201);
  const answers: { status: number; code?: string; ms: number; payloads: string[] }[] = [];
  const consume = async (timeout: number) => {
    const t0 = Date.now();
    const a = await api('POST', `/subscriptions/${name}/messages/consume`, { subscriber_id: 'one', max_messages: 3, timeout_seconds: timeout });
    const payloads = a.status === 200 ? (a.body.data.messages as { payload: string }[]).map((m) => m.payload) : [];
    answers.push({ status: a.status, code: a.body?.error?.code, ms: Date.now() - t0, payloads });
    return payloads;
  };
  const crowd = Promise.all(Array.from({ length: CROWD }, () => consume(3)));
  for (let i = 0; i < MESSAGES; i++) {
    expect((await api('POST', `/topics/${topic}/messages`, { payload: `m${i}` })).status).toBe(201);
  }
  await crowd;
  const drained: string[] = [];
  for (let page = 0; page < 50; page++) {
    const got = await consume(0);
    if (!got.length && answers[answers.length - 1].status === 200) break;
    drained.push(...got);
  }
  const all = answers.flatMap((a) => a.payloads);
  const statuses = answers.reduce<Record<string, number>>((m, a) => ({ ...m, [`${a.status}${a.code ? ` ${a.code}` : ''}`]: (m[`${a.status}${a.code ? ` ${a.code}` : ''}`] ?? 0) + 1 }), {});
  // What the crowd met, for the record (no timing is asserted).
  console.log(JSON.stringify({ crowd: CROWD, statuses, slowestMs: Math.max(...answers.map((a) => a.ms)), returned: all.length, drained: drained.length }));
  expect(statuses).toEqual({ '200': answers.length });
  expect(all.length - new Set(all).size).toBe(0);
  expect(new Set(all)).toEqual(new Set(Array.from({ length: MESSAGES }, (_, i) => `m${i}`)));
});
