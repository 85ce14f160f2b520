/**
 * The arrange of the webhook share's fault tests (lambda/webhooks/share.ts): a namespace share of
 * two batches' jobs (the slow lane holds one batch) and a fault injector on the DynamoDB client,
 * set up before the file's tests and taken down after. Call at a test file's top level.
 */
import { resetConfig } from '../../lambda/core/config';
import { dynamoClient } from '../../lambda/core/storage/client';
import { DELIVERY_BATCH_SIZE } from '../../lambda/webhooks/storage/delivery-queue';
import { FaultInjector } from './injector';

export function shareUnderFaults(seed: number): FaultInjector {
  const injector = new FaultInjector(seed);
  beforeAll(() => {
    // Two batches' jobs: the slow lane holds half of it, one batch.
    process.env.MSG_WEBHOOK_NAMESPACE_SHARE = String(2 * DELIVERY_BATCH_SIZE);
    resetConfig();
    injector.attach(dynamoClient(), 'dynamodb');
  });
  afterAll(() => {
    injector.set(undefined);
    delete process.env.MSG_WEBHOOK_NAMESPACE_SHARE;
    resetConfig();
  });
  afterEach(() => injector.clearOneShots());
  return injector;
}
