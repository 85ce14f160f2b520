/**
 * The test processes' service clients send unsigned requests to the local engines
 * (test/fixtures/unsigned-requests.ts): the plugin replaces the SDK's signing step rather than
 * adding a step beside it, so no request pays for a signature, and the fixed header still names
 * the access key and region the engines read.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { withClientPlugins } from '../../lambda/core/client-plugins';
import { sendUnsigned } from '../fixtures/unsigned-requests';

/** The headers of the first request a client sends to a local server that answers an empty item. */
async function headersOf(build: (endpoint: string) => DynamoDBClient): Promise<IncomingHttpHeaders> {
  let seen: IncomingHttpHeaders | undefined;
  const server = createServer((req, res) => {
    seen ??= req.headers;
    req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' }).end('{}'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const client = build(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    await client.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'k' } } }));
    client.destroy();
    return seen!;
  } finally {
    server.close();
  }
}

it('replaces the SDK signing step of the clients the service builds with a fixed header', async () => {
  sendUnsigned();
  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  const plain = await headersOf((endpoint) => new DynamoDBClient({ region: 'us-east-1', endpoint, credentials }));
  expect(plain.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=local\/\d{8}\/us-east-1\/dynamodb\/aws4_request, SignedHeaders=.+, Signature=[0-9a-f]{64}$/);

  const built = withClientPlugins('dynamodb', new DynamoDBClient({ region: 'us-east-1', credentials }));
  expect(built.middlewareStack.identify().filter((m) => m.startsWith('httpSigningMiddleware'))).toHaveLength(1);
  const unsigned = await headersOf((endpoint) => withClientPlugins('dynamodb', new DynamoDBClient({ region: 'us-east-1', endpoint, credentials })));
  expect(unsigned.authorization).toBe('AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0');
});
