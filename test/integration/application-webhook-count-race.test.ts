/**
 * The race checked: a webhook's delete counts its binding out of its filter as it read the webhook, but
 * its transaction holds only to the id (deleteResource in lambda/core/storage/resource-writes.ts,
 * `id = :id`). Since webhooks of an application left the filter counts (countsInFilter), a PATCH
 * that gives the webhook an application between the delete's read and its write counts the
 * binding out, and the delete counts it out again: the filter's count goes below its bindings and
 * `bindings-per-topic-filter` (and the reach check) can be exceeded. (The reverse, a PATCH that
 * drops the application, leaves a phantom binding that refuses the filter for good.) The delete's
 * transaction is held, not changed, to place the PATCH inside that window.
 */
import { applicationWebhooksKit, hook } from '../fixtures/application-webhooks';
import { ddb } from '../../lambda/core/storage/client';
import { deleteWebhook } from '../../lambda/webhooks/operations';

jest.setTimeout(120_000);

const kit = applicationWebhooksKit();

it("a PATCH that gives a webhook an application while it is being deleted leaves its filter's count right", async () => {
  const { ns, platform, app } = await kit.namespace('apprace');
  const w = hook('race/#');
  expect((await platform('POST', '/webhooks', w)).status).toBe(201);

  // Hold this webhook's delete transaction (after its read) until the PATCH has answered.
  let reached!: () => void;
  const atWrite = new Promise<void>((r) => (reached = r));
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const holdDelete = (next: (a: unknown) => Promise<unknown>) => async (args: unknown) => {
    const first = (args as { input?: { TransactItems?: { Delete?: { Key?: { sk?: string } } }[] } }).input?.TransactItems?.[0];
    if (first?.Delete?.Key?.sk?.includes(w.name)) {
      reached();
      await gate;
    }
    return next(args);
  };
  ddb().middlewareStack.add(holdDelete as never, { step: 'initialize', name: 'reviewHoldDelete' });
  try {
    const deleting = deleteWebhook(ns.name, w.name, Date.now());
    await atWrite;
    expect((await platform('PATCH', `/webhooks/${w.name}`, { application: app })).status).toBe(200);
    release();
    await deleting;
  } finally {
    ddb().middlewareStack.remove('reviewHoldDelete');
  }

  // The filter has no binding that counts; its cap of 1 lets one plain webhook in, not two.
  expect((await platform('POST', '/webhooks', hook('race/#'))).status).toBe(201);
  const second = await platform('POST', '/webhooks', hook('race/#'));
  expect([second.status, second.body.error?.code]).toEqual([409, 'LIMIT_EXCEEDED']);
});
