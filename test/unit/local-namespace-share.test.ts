/**
 * The namespace share the local runtime and the benches take (MSG_WEBHOOK_NAMESPACE_SHARE unset:
 * lambda/core/config.ts) against the share the stack sets for the same delivery capacity
 * (namespaceShareFor, a quarter of the jobs the mapping's maximum concurrency holds). A local
 * share smaller than the stack's for the local mapping's capacity (local/webhooks.ts
 * deliveryMapping) would let a namespace with a backlog hold a smaller part of the capacity than
 * deployed: the other namespaces' deliveries (what the fairness target promises) would see a
 * kinder neighbour locally than in AWS. At least as harsh as AWS for that promise: the local
 * share of the local capacity is no smaller than the stack's share of the same capacity.
 */
import { config, resetConfig } from '../../lambda/core/config';
import { DELIVERY_BATCH_SIZE, namespaceShareFor } from '../../lambda/webhooks/storage/delivery-queue';
import { laneShares } from '../../lambda/webhooks/rules/delivery-lanes';
import { deliveryMapping } from '../../local/webhooks';

const saved = process.env.MSG_WEBHOOK_NAMESPACE_SHARE;
beforeAll(() => {
  delete process.env.MSG_WEBHOOK_NAMESPACE_SHARE;
  resetConfig();
});
afterAll(() => {
  if (saved !== undefined) process.env.MSG_WEBHOOK_NAMESPACE_SHARE = saved;
  resetConfig();
});

it("lets a noisy namespace hold no smaller part of the local mapping's capacity than the stack's share of the same capacity", () => {
  const mapping = deliveryMapping({ url: 'http://local/q', arn: 'arn:aws:sqs:us-east-1:000000000000:q' });
  const stackShare = namespaceShareFor(mapping.concurrency);
  const localShare = config().webhookNamespaceShare;
  // In batches: what the noisy namespace may hold of the mapping's pollers (fast and slow lanes).
  const batches = (share: number) => {
    const l = laneShares(share, DELIVERY_BATCH_SIZE);
    return l.fast.batches + l.slow.batches;
  };
  expect({ concurrency: mapping.concurrency, batches: batches(localShare) }).toEqual({ concurrency: mapping.concurrency, batches: batches(stackShare) });
  expect(localShare).toBeGreaterThanOrEqual(stackShare);
});
