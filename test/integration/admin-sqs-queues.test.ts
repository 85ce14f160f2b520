/**
 * `npm run admin -- sqs-queues list|delete` on DynamoDB Local and fauxqs: the SQS queues of the
 * deployment's prefix, which service queue each belongs to, and removal of the ones no queue uses
 * (left by a deleted queue before the sweeper ran, or by `cdk destroy`).
 */
import { run } from '../../bin/admin';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { queueApi, unique } from '../fixtures/queues';
import { getQueue } from '../../lambda/queues/storage/queues';
import { sqsQueueCounts } from '../../lambda/queues/storage/service-queues';

// Listing reads every SQS queue's tags and counts: slow on a loaded machine.
// Generous: the test runs beside other files (npm test runs three at once on two cores).
jest.setTimeout(120_000);

let server: TestServer;
let ns: TestNamespace;
let q: ReturnType<typeof queueApi>;

async function admin(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(argv, { out: (l) => out.push(l), err: (l) => err.push(l), env: process.env });
  return { code, out: out.join('\n'), err: err.join('\n') };
}
async function json(...argv: string[]) {
  const r = await admin(...argv, '--json');
  expect(r.code).toBe(0);
  return JSON.parse(r.out);
}

beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('sqsq');
  q = queueApi(client(server.baseUrl, ns.key));
});
afterAll(() => server.close());

describe('admin CLI: sqs-queues', () => {
  it('lists the SQS queue of each queue with its namespace, name and messages, and deletes only the orphans', async () => {
    const kept = unique('kept');
    const gone = unique('gone');
    await q.create({ name: kept, topic_filter: `${kept}/#` });
    await q.create({ name: gone, topic_filter: `${gone}/#` });
    await q.publishBatch(`${kept}/t`, [{ payload: 'a' }, { payload: 'b' }]);
    const keptSqs = (await getQueue(ns.name, kept))!.sqs_queue;
    const goneSqs = (await getQueue(ns.name, gone))!.sqs_queue;
    await q.remove(gone); // its SQS queue stays until the sweeper (not running here) removes it

    const listed = (await json('sqs-queues', 'list', '--namespace', ns.name)) as { name: string; namespace: string; queue: string; in_use: boolean; counts: { visible: number } }[];
    expect(listed.find((x) => x.name === keptSqs)).toMatchObject({ namespace: ns.name, queue: kept, in_use: true, counts: { visible: 2 } });
    expect(listed.find((x) => x.name === goneSqs)).toMatchObject({ namespace: ns.name, queue: gone, in_use: false });

    // Younger than the default --min-age (300 s): not taken for an orphan yet.
    expect((await json('sqs-queues', 'delete', '--namespace', ns.name)).would_delete).toEqual([]);
    const dry = await json('sqs-queues', 'delete', '--namespace', ns.name, '--min-age', '0');
    expect(dry).toMatchObject({ dry_run: true });
    expect(dry.would_delete).toContain(goneSqs);
    expect(dry.would_delete).not.toContain(keptSqs);
    expect(await sqsQueueCounts(goneSqs)).toBeDefined();

    const done = await json('sqs-queues', 'delete', '--orphans', '--namespace', ns.name, '--min-age', '0', '--yes');
    expect(done.deleted).toContain(goneSqs);
    expect(done.deleted).not.toContain(keptSqs);
    expect(await sqsQueueCounts(goneSqs)).toBeUndefined();
    expect((await q.consume(kept, { max_messages: 10 })).map((m) => m.payload).sort()).toEqual(['a', 'b']);
  });

  it('refuses --all together with --orphans and a positional argument, with exit status 2', async () => {
    expect((await admin('sqs-queues', 'delete', '--all', '--orphans')).code).toBe(2);
    expect((await admin('sqs-queues', 'list', 'extra')).code).toBe(2);
    expect((await admin('sqs-queues', 'list', '--yes')).code).toBe(2);
    expect((await admin('sqs-queues', 'delete', '--min-age', 'soon')).code).toBe(2);
  });
});
