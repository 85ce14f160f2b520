/**
 * The service's reads that a flow makes right after a write, with DynamoDB's eventually consistent
 * reads emulated (local/aws-harsh/dynamodb-reads.ts) on the service's own client: each must be a
 * strongly consistent read, since in AWS an eventually consistent one "may not reflect the results
 * of a recently completed write operation"
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html).
 * The clock of the emulation stands still, so every write of this file stays within the lag.
 */
import { randomBytes } from 'node:crypto';
import { registerClientPlugin } from '../../lambda/core/client-plugins';
import { ecReadLagPlugin } from '../../local/aws-harsh/dynamodb-reads';
import { findActiveKey, getApiKeyById, listApiKeys, putApiKey, revokeApiKey } from '../../lambda/namespaces/storage/api-keys';
import { createNamespace, getNamespace, setNamespaceLimits } from '../../lambda/namespaces/storage/namespaces';
import { namespaceCaps, setNamespaceCap } from '../../lambda/core/storage/resource-limits';
import { scheduleLimit, setScheduleLimit } from '../../lambda/schedules/storage/schedules';
import { createApplication, listApplications } from '../../lambda/applications/storage/applications';
import { resetClients } from '../../lambda/core/storage/client';

// Before the service's client exists: it is created with the plugins registered by then.
resetClients();
registerClientPlugin('dynamodb', ecReadLagPlugin({ ...process.env, MSG_AWS_HARSH_EC_READS: '1000' }, () => 0));
afterAll(() => resetClients());

jest.setTimeout(30_000);

const hex = () => randomBytes(4).toString('hex');
async function namespaceWithKey() {
  const ns = `ec-${hex()}`;
  expect(await createNamespace(ns, Date.now())).toBe(true);
  const key = `k_${randomBytes(16).toString('hex')}`;
  const keyId = `key-${hex()}`;
  expect(await putApiKey(key, { key_id: keyId, namespace: ns, scopes: ['*'], created_at: Date.now() })).toBe(true);
  return { ns, key, keyId };
}

it('finds a namespace and a key just created (the admin CLI, then the first request)', async () => {
  const { ns, key, keyId } = await namespaceWithKey();
  expect(await getNamespace(ns)).toMatchObject({ name: ns });
  expect(await findActiveKey(key)).toMatchObject({ namespace: ns, key_id: keyId });
  expect(await getApiKeyById(ns, keyId)).toMatchObject({ key_id: keyId });
  expect((await listApiKeys(ns)).map((k) => k.key_id)).toEqual([keyId]);
});

it('revokes a key just created', async () => {
  const { ns, key, keyId } = await namespaceWithKey();
  expect(await revokeApiKey(ns, keyId, Date.now())).toBe(true);
  expect(await findActiveKey(key)).toBeUndefined();
});

it('applies caps and limits set a moment ago, and keeps both of two limit changes in a row', async () => {
  const { ns } = await namespaceWithKey();
  expect(await setNamespaceCap(ns, 'queues', 3)).toBe(true);
  expect((await namespaceCaps(ns)).queues).toBe(3);
  expect(await setScheduleLimit(ns, 7)).toBe(true);
  expect(await scheduleLimit(ns)).toBe(7);
  await setNamespaceLimits(ns, { publish: 11 });
  await setNamespaceLimits(ns, { consume: 22 });
  expect((await getNamespace(ns))?.limits).toEqual({ publish: 11, consume: 22 });
});

it('lists an application just created', async () => {
  const { ns } = await namespaceWithKey();
  const now = Date.now();
  expect(await createApplication({ namespace: ns, uid: 'app-1', created_at: now, updated_at: now, version: 1, portal_generation: 0, incarnation: hex() }, 10)).toBe('created');
  expect((await listApplications(ns)).map((a) => a.uid)).toEqual(['app-1']);
});
