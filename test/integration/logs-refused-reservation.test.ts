/**
 * A publish whose reservation is refused holds no position: no offset, no gap, nothing a reader
 * waits for. On DynamoDB Local through the real local gateway, with the harsh layer's transaction
 * conflicts (local/aws-harsh/dynamodb-transactions.ts): a single write (the reservation's UpdateItem
 * of the head) on an item that a TransactWriteItems in flight includes is rejected with
 * `TransactionConflictException` and writes nothing ("Transaction conflict handling in DynamoDB",
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling).
 * A failed publish's record writes its gap onto the head in such a transaction
 * (lambda/logs/storage/log-records.ts `writeRecord`), so a publish may be refused while another
 * one's gap is being recorded; the SDK retries the refusal, and when every attempt meets the
 * transaction the publish fails with it (503 and `Retry-After` over HTTP) before reserving.
 *
 * The transaction is held in flight here by a middleware on this process's DynamoDB client,
 * inside the harsh layer's (which holds the items from send to answer), that makes the head's
 * transactions wait for a gate before they reach DynamoDB Local: a slow transaction, as on a
 * loaded machine.
 */
import type { Pluggable } from '@smithy/types';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { headOf, logApi, published, streamBinding, unstorable } from '../fixtures/logs';
import { appendToStreams } from '../../lambda/streams/storage/stream-log';
import { dynamoClient } from '../../lambda/core/storage/client';

jest.setTimeout(60_000);

let server: TestServer;
let ns: TestNamespace;
let logs: ReturnType<typeof logApi>;
let call: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('refused');
  call = client(server.baseUrl, ns.key);
  logs = logApi(call);
});
afterAll(() => server.close());

const GATE = 'testHoldHeadTransactions';

/**
 * Makes every TransactWriteItems that includes the head of `logId` wait for the returned
 * `release` (the harsh layer holds its items meanwhile); `reached` resolves when the first one waits.
 */
function holdHeadTransactions(logId: string): { reached: Promise<void>; release: () => void } {
  let release!: () => void;
  let reached!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const seen = new Promise<void>((r) => (reached = r));
  const middleware = (next: (a: unknown) => Promise<unknown>) => async (args: { request?: { headers?: Record<string, string>; body?: unknown } }) => {
    const target = Object.entries(args.request?.headers ?? {}).find(([n]) => n.toLowerCase() === 'x-amz-target')?.[1] ?? '';
    const raw = args.request?.body;
    const body = typeof raw === 'string' ? raw : raw instanceof Uint8Array ? new TextDecoder().decode(raw) : '';
    if (target.endsWith('.TransactWriteItems') && body.includes(`#LOG#${logId}`) && body.includes('#HEAD')) {
      reached();
      await gate;
    }
    return next(args);
  };
  const plugin: Pluggable<any, any> = {
    applyToStack: (stack: any) => stack.addRelativeTo(middleware, { relation: 'after', toMiddleware: 'awsHarshTransactionConflicts', name: GATE, override: true }),
  };
  dynamoClient().middlewareStack.use(plugin);
  return { reached: seen, release };
}

afterEach(() => dynamoClient().middlewareStack.remove(GATE));

it('a publish refused while a failed publish records its gap on the head takes no offset and leaves no gap: readers wait for nothing', async () => {
  const { name, topic } = await logs.stream({ partition_count: 2 });
  const { s, binding } = await streamBinding(ns.name, name);
  const now = Date.now();
  await appendToStreams({ namespace: ns.name, now }, [binding], [published('stored-0', now, { partition_key: 'a' })]);

  const held = holdHeadTransactions(s.id);
  // A failed publish: it reserves position 1, its chunk is refused, its record and gap wait at the gate.
  const failing = appendToStreams({ namespace: ns.name, now }, [binding], [unstorable(now)]).then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  await held.reached;
  // Another failed publish meanwhile: its reservation meets the transaction on every attempt.
  const refused = await appendToStreams({ namespace: ns.name, now }, [binding], [unstorable(now)]).then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  expect(refused?.name).toBe('TransactionConflictException');
  // A client's publish meanwhile is answered 503 with Retry-After (retryable, nothing stored).
  const res = await call('POST', `/topics/${topic}/messages`, { payload: 'later', partition_key: 'a' });
  expect([res.status, res.headers['retry-after']]).toEqual([503, '1']);
  // Nothing reserved by either: the head's positions are the stored message's and the failing one's.
  expect((await headOf(ns.name, s.id))!.next).toBe(2);

  held.release();
  expect((await failing)?.message).toMatch(/Item size has exceeded/);
  const head = (await headOf(ns.name, s.id))!;
  // One gap, the failing publish's position; the refused ones have none, as they have no position.
  expect([head.next, head.gaps]).toEqual([2, { '1': { s: 1, n: 1, b: expect.any(Number) } }]);
  expect(await logs.getStream(name)).toMatchObject({ latest_offset: 2, message_count: 1 });
  // The client retries its 503: a new offset after the gap; a reader passes the gap and waits for nothing.
  await logs.publish(topic, { payload: 'later', partition_key: 'a' });
  const read = await logs.read(name);
  expect([read.messages.map((m) => [m.offset, m.payload]), read.next_offset]).toEqual([
    [
      [0, 'stored-0'],
      [2, 'later'],
    ],
    3,
  ]);
});
