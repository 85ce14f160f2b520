/**
 * A single-item write rejected because a transaction holds its item (TransactionConflictException:
 * nothing written) is sent again by the SDK's own retries (lambda/core/storage/client.ts), against a
 * DynamoDB endpoint that answers the first attempt with that error, as AWS does while a
 * transaction is in progress on the item.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { retryTransactionConflicts } from '../../lambda/core/storage/client';

let server: Server;
let endpoint: string;
let conflicts = 0;
let requests = 0;
beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests++;
      res.setHeader('content-type', 'application/x-amz-json-1.0');
      if (conflicts > 0) {
        conflicts--;
        res.statusCode = 400;
        res.end(JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#TransactionConflictException', message: 'Transaction is ongoing for the item' }));
        return;
      }
      res.end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => {
  requests = 0;
});

const update = () =>
  new UpdateItemCommand({ TableName: 't', Key: { pk: { S: 'a' } }, UpdateExpression: 'ADD n :one', ExpressionAttributeValues: { ':one': { N: '1' } } });
const client = (wrapped: boolean) => {
  const c = new DynamoDBClient({ region: 'us-east-1', endpoint, credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
  return wrapped ? retryTransactionConflicts(c) : c;
};

it('the SDK alone gives up at once on a transaction conflict (why the client marks it)', async () => {
  conflicts = 1;
  await expect(client(false).send(update())).rejects.toMatchObject({ name: 'TransactionConflictException' });
  expect(requests).toBe(1);
});

it("a write that met a transaction in progress is sent again and succeeds", async () => {
  conflicts = 1;
  await expect(client(true).send(update())).resolves.toBeDefined();
  expect(requests).toBe(2);
});

it('a conflict that lasts is still given up after the SDK retries, with its own name', async () => {
  conflicts = 10;
  await expect(client(true).send(update())).rejects.toMatchObject({ name: 'TransactionConflictException' });
  expect(requests).toBeGreaterThan(2); // the SDK's attempts, then the error
  conflicts = 0;
});
