/**
 * Webhooks of an application stored before they left the topic binding caps (items kept across an upgrade).
 * Until the change that keeps them out of `bindings-per-topic-filter` (countsInFilter in
 * lambda/core/storage/resource-writes.ts), creating a webhook of an application counted its binding in its
 * filter's count. Deciding from the item's config whether it was counted, the delete of such a
 * webhook (or of its application) never counted it out, and a PATCH that dropped its application
 * counted it in a second time: phantom bindings for ever. Each write now records whether it
 * counted (`filter_counted`); an item without the flag was counted, and its next rewrite or its
 * delete counts it out.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { applicationWebhooksKit, hook } from '../fixtures/application-webhooks';
import { ddb, tableName } from '../../lambda/core/storage/client';
import { metaKeys } from '../../lambda/core/storage/keys';

jest.setTimeout(120_000);

const kit = applicationWebhooksKit();

it("a webhook of an application created before the change frees its filter's binding when deleted", async () => {
  const { ns, platform, app } = await kit.namespace('appup');
  const old = hook('orders/#', app);
  expect((await platform('POST', '/webhooks', old)).status).toBe(201);
  // What the create's transaction also wrote before the change (countBindingIn of its filter),
  // and the item as it wrote it: without the `filter_counted` flag the new writes record.
  await ddb().send(new UpdateCommand({ TableName: tableName('meta'), Key: metaKeys.filterBindingCount(ns.name, old.topic_filter), UpdateExpression: 'ADD n :one', ExpressionAttributeValues: { ':one': 1 } }));
  await ddb().send(new UpdateCommand({ TableName: tableName('meta'), Key: metaKeys.resource(ns.name, 'WEBHOOK', old.name), UpdateExpression: 'REMOVE filter_counted' }));
  expect((await platform('DELETE', `/webhooks/${old.name}`)).status).toBe(200);
  // The filter has no binding left; its cap of 1 has room.
  const plain = await platform('POST', '/webhooks', hook('orders/#'));
  expect([plain.status, plain.body.error?.code]).toEqual([201, undefined]);
});
