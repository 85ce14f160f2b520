/**
 * A repeat of a TransactWriteItems with the same ClientRequestToken while the first is still in
 * progress: AWS answers it with `TransactionInProgressException` ("The transaction with the given
 * request token is already in progress"; the SDK retries it as a throttle, and AWS recovers the
 * first inline only for a retry about 5 s after it reached the coordinator:
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html, Errors,
 * and the SDKs' TransactionInProgressException page). The harsh layer
 * (local/aws-harsh/dynamodb-transactions.ts) lets the repeat through to DynamoDB Local, which
 * answers it as done: kinder than AWS. A subscriber's cursor move (lambda/subscriptions/storage/subscriptions.ts)
 * relies on such repeats after a lost answer; locally they can never meet the in-progress answer.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../lambda/core/config';
import { tableName } from '../../lambda/core/storage/client';
import { transactionConflictPlugin } from '../../local/aws-harsh/dynamodb-transactions';

jest.setTimeout(30_000);

const raw = new DynamoDBClient({ region: 'us-east-1', endpoint: config().dynamodbEndpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
raw.middlewareStack.use(transactionConflictPlugin(process.env));
// The first request of a token is held just before DynamoDB Local, inside the harsh layer (which
// has registered it as in flight): a transaction still in progress at the service.
let holdNext: Promise<void> | undefined;
let reachedHold!: () => void;
raw.middlewareStack.addRelativeTo(
  (next: any) => async (args: any) => {
    const held = holdNext;
    holdNext = undefined;
    if (held) {
      reachedHold();
      await held;
    }
    return next(args);
  },
  { relation: 'after', toMiddleware: 'awsHarshTransactionConflicts', name: 'holdFirst' },
);
const doc = DynamoDBDocumentClient.from(raw);
afterAll(() => raw.destroy());

const META = () => tableName('meta');
const n = async (pk: string) => ((await doc.send(new GetCommand({ TableName: META(), Key: { pk, sk: 'X' }, ConsistentRead: true }))).Item?.n as number | undefined) ?? 0;

it('answers a repeat of a token whose first request is still in progress with TransactionInProgressException, as AWS does', async () => {
  const pk = `TXP#${randomBytes(4).toString('hex')}`;
  const input = { ClientRequestToken: randomUUID(), TransactItems: [{ Update: { TableName: META(), Key: { pk, sk: 'X' }, UpdateExpression: 'ADD n :one', ExpressionAttributeValues: { ':one': 1 } } }] };
  let release!: () => void;
  holdNext = new Promise<void>((r) => (release = r));
  const reached = new Promise<void>((r) => (reachedHold = r));
  const first = doc.send(new TransactWriteCommand(input));
  await reached;
  // The SDK's retry after the first attempt's answer was lost (a client timeout), the same request.
  const repeat = await doc.send(new TransactWriteCommand(input)).then(() => 'applied or answered as done', (e: { name?: string }) => e.name);
  release();
  await first;
  expect({ repeat, n: await n(pk) }).toEqual({ repeat: 'TransactionInProgressException', n: 1 });
});
