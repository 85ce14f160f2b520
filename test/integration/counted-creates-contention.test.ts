/**
 * Counted creates under contention (lambda/core/storage/resource-limits.ts `putCounted`, through the
 * catalog's event-type create, which bumps its namespace's versions item in the same transaction):
 * many at once at a cap below their number, beside single writes and other transactions on the same
 * versions item, with the harsh layer's transaction conflicts holding every transaction's items
 * {@link HOLD_MS} past its answer (local/aws-harsh/dynamodb-transactions.ts) and some answers lost
 * (applied or not: a timeout after or before the request reached DynamoDB, which the SDK retries
 * with the same ClientRequestToken). Whatever the order, a create answered 'created' is stored and
 * counted, once: the answers 'created', the items stored and the counter agree and stay within the
 * cap; every other answer is 'limit', or 'exists' for a name asked twice; none is an error.
 * Called through the storage functions (the HTTP path adds nothing to the count, and the local
 * gateway's limits are not what is tested), in batches.
 */
import { randomBytes } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../lambda/core/config';
import { registerClientPlugin } from '../../lambda/core/client-plugins';
import { allEventTypes, createEventType, eventTypeCount, itemOf } from '../../lambda/catalog/storage/event-types';
import { ddb, dynamoClient, tableName, transactWrite } from '../../lambda/core/storage/client';
import { metaKeys } from '../../lambda/core/storage/keys';
import { transactionConflictPlugin } from '../../local/aws-harsh/dynamodb-transactions';

jest.setTimeout(60_000);

const HOLD_MS = 50;
const CREATES = 100;
const BATCH = 20;
const CAP = 60;
/** In each batch, this many creates ask again for a name of the same batch. */
const DUPLICATES = 2;
// Registered before the service client exists; it replaces the default plugin (same name).
const holds = transactionConflictPlugin({ ...process.env, MSG_AWS_HARSH_TX_HOLD_MS: String(HOLD_MS) });
registerClientPlugin('dynamodb', holds);
/**
 * The other writers' single writes go through a client of their own with the same holds (one
 * plugin: its holds are shared): the SDK's retry quota is per client, and their retries of
 * conflicts must not spend the creates'.
 */
const others = new DynamoDBClient({ region: config().region, endpoint: config().dynamodbEndpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
others.middlewareStack.use(holds);
const othersDoc = DynamoDBDocumentClient.from(others);
afterAll(() => others.destroy());

/**
 * Loses some answers of the creates' TransactWriteItems, by the order their tries' ClientRequestTokens
 * are first seen (a try sent again after a conflict has a new token unless it may have been
 * applied): a try's first attempt applied and its answer lost (a timeout after the write), or lost
 * before it reached DynamoDB (a timeout before), both of which the SDK retries with the same token
 * (a timeout is transient, https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html);
 * and a few tries whose every attempt's answer is lost after the write, which the create then reads
 * back. Each kind a bounded number of times: the SDK's retry quota (500 tokens, 10 a timeout's retry,
 * given back when a retry succeeds) is the client's own: a call that finds it spent is not retried.
 */
function loseSomeAnswers(ns: string): { lost: { after: number; before: number; every: number }; stop: () => void } {
  const lost = { after: 0, before: 0, every: 0 };
  const fates = new Map<string, 'after' | 'before' | 'every' | 'none'>();
  const budget = { after: 20, before: 20, every: 4 };
  const name = `lose-some-${ns}`;
  const timeout = () => Object.assign(new Error('injected: answer lost'), { name: 'TimeoutError', $metadata: {} });
  dynamoClient().middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'TransactWriteItemsCommand' || !JSON.stringify(args.input).includes(`NS#${ns}#EVENTTYPES`)) return next(args);
      const token = String((args.input as { ClientRequestToken?: string }).ClientRequestToken);
      const first = !fates.has(token);
      if (first) {
        const i = fates.size + 1;
        const fate = i % 17 === 0 ? 'every' : i % 5 === 0 ? 'after' : i % 7 === 0 ? 'before' : 'none';
        fates.set(token, fate !== 'none' && budget[fate]-- > 0 ? fate : 'none');
      }
      const fate = fates.get(token);
      if (fate === 'before' && first) {
        lost.before++;
        throw timeout();
      }
      const out = await next(args);
      // This step sees the HTTP answer before it is read: only a 200 is a write applied.
      const applied = (out as { response?: { statusCode?: number } }).response?.statusCode === 200;
      if (applied && ((fate === 'after' && first) || fate === 'every')) {
        lost[fate]++;
        throw timeout();
      }
      return out;
    },
    { step: 'deserialize', name },
  );
  return { lost, stop: () => dynamoClient().middlewareStack.remove(name) };
}

it(`${CREATES} counted creates at a cap of ${CAP}, beside writes of the same versions item, with long holds and lost answers: answers, items and count agree`, async () => {
  const ns = `cc-${randomBytes(4).toString('hex')}`;
  const versions = metaKeys.publishVersions(ns);
  const noise = { single: 0, transactions: 0, failed: [] as string[] };
  const single = () =>
    othersDoc
      .send(new UpdateCommand({ TableName: tableName('meta'), Key: versions, UpdateExpression: 'ADD noise_single :one', ExpressionAttributeValues: { ':one': 1 } }))
      .then(() => noise.single++, (e: Error) => noise.failed.push(e.name));
  const transaction = () =>
    transactWrite({ TransactItems: [{ Update: { TableName: tableName('meta'), Key: versions, UpdateExpression: 'ADD noise_tx :one', ExpressionAttributeValues: { ':one': 1 } } }] }).then(
      () => noise.transactions++,
      (e: Error) => noise.failed.push(e.name),
    );

  const asked: { name: string; revision: string; duplicate: boolean; answer: string }[] = [];
  const injected = loseSomeAnswers(ns);
  const started = Date.now();
  try {
    for (let b = 0; b * BATCH < CREATES; b++) {
      const names = Array.from({ length: BATCH }, (_, i) => (i < BATCH - DUPLICATES ? `c/${b}/${i}` : `c/${b}/${i - (BATCH - DUPLICATES)}`));
      await Promise.all([
        ...names.map(async (name, i) => {
          const item = itemOf(ns, name, { enforce: false }, 1, Date.now(), Date.now());
          const answer = await createEventType(item, CAP).catch((e: Error) => `error ${e.name}: ${e.message}`);
          asked.push({ name, revision: item.revision as string, duplicate: i >= BATCH - DUPLICATES || i < DUPLICATES, answer });
        }),
        ...Array.from({ length: 2 }, single),
        ...Array.from({ length: 2 }, transaction),
      ]);
    }
  } finally {
    injected.stop();
  }
  const tookMs = Date.now() - started;

  const stored = await allEventTypes(ns);
  const created = asked.filter((a) => a.answer === 'created');
  const bumps = (await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: versions, ConsistentRead: true }))).Item;
  // A create that gave up (a 503 to its client: the conflicts outlasted its tries, or every answer
  // was lost) may or may not have been stored; every other answer says what happened.
  const gaveUp = asked.filter((a) => a.answer.startsWith('error '));
  const others = asked.filter((a) => a.answer !== 'created' && a.answer !== 'limit' && !(a.answer === 'exists' && a.duplicate) && !a.answer.startsWith('error '));
  const storedRevisions = stored.map((s) => `${s.name} ${s.revision}`);
  const count = await eventTypeCount(ns);
  expect({
    counted: count,
    // Each stored create bumped the catalog's version once, with its item.
    catalogVersion: bumps?.catalog_version,
    // What was answered 'created' is stored, revision for revision (no answer for another's item),
    // and what is stored was answered 'created' or gave up.
    createdNotStored: created.filter((c) => !storedRevisions.includes(`${c.name} ${c.revision}`)),
    storedNotAnswered: storedRevisions.filter((r) => !created.some((c) => `${c.name} ${c.revision}` === r) && !gaveUp.some((g) => `${g.name} ${g.revision}` === r)),
    others,
    withinCap: stored.length <= CAP,
  }).toEqual({ counted: stored.length, catalogVersion: stored.length, createdNotStored: [], storedNotAnswered: [], others: [], withinCap: true });
  // Refused only at the cap: with no create given up, the cap is reached exactly.
  if (!gaveUp.length) expect({ created: created.length, refused: asked.filter((a) => a.answer === 'limit' || a.answer === 'exists').length }).toEqual({ created: CAP, refused: CREATES - CAP });
  // A create refused for the cap saw it full: no item is ever deleted here, so it stays full.
  if (asked.some((a) => a.answer === 'limit')) expect(stored.length).toBe(CAP);
  // The contention and the faults were there: answers lost both ways, and the other writers of the
  // versions item wrote beside the creates (a single write the SDK gave up on is theirs to retry).
  expect(injected.lost.after).toBeGreaterThan(0);
  expect(injected.lost.before).toBeGreaterThan(0);
  expect(injected.lost.every).toBeGreaterThan(0);
  expect(noise.transactions).toBeGreaterThan(0);
  expect(bumps?.noise_tx).toBe(noise.transactions);
  console.log(
    `counted-creates-contention: ${CREATES} creates (cap ${CAP}, holds ${HOLD_MS} ms) in ${tookMs} ms, ${created.length} created, ${gaveUp.length} gave up; answers lost after/before the write ${injected.lost.after}/${injected.lost.before}, and ${injected.lost.every} of tries that lost every answer; beside ${noise.single} single writes and ${noise.transactions} transactions (${noise.failed.length} given up: ${[...new Set(noise.failed)].join(', ')})`,
  );
});
