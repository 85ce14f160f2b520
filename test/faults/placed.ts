/**
 * The setup every file of placed faults shares: the local test server, a namespace with its key,
 * and a fault injector on the real clients of the services the file fails (./injector.ts). Its
 * fields are set in `beforeAll`; read them inside tests.
 */
import { dynamoClient } from '../../lambda/core/storage/client';
import { sqsClient } from '../../lambda/core/adapters/sqs';
import { startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { ApiClient } from './api';
import { FaultInjector } from './injector';

export interface PlacedFaults {
  injector: FaultInjector;
  api: ApiClient;
  /** The namespace's name (storage keys are scoped by it). */
  namespace: string;
}

export function placedFaults(o: { namespace: string; seed: number; services: ('dynamodb' | 'sqs')[] }): PlacedFaults {
  const t = { injector: new FaultInjector(o.seed) } as PlacedFaults;
  let server: TestServer | undefined;
  beforeAll(async () => {
    server = await startTestServer();
    const ns = await createTestNamespace(o.namespace);
    t.api = new ApiClient(server.baseUrl, ns.key);
    t.namespace = ns.name;
    if (o.services.includes('dynamodb')) t.injector.attach(dynamoClient(), 'dynamodb');
    if (o.services.includes('sqs')) t.injector.attach(sqsClient(), 'sqs');
  });
  afterAll(async () => {
    t.injector.set(undefined);
    t.api?.close();
    await server?.close();
  });
  return t;
}
