/**
 * The admin CLI's usage-plan twins (bin/admin-usage-plan.ts): the exact API Gateway requests,
 * sent through an injected client (no network), clean-up when half done, messages that say what
 * to do; and where the usage plan id comes from (bin/admin-target.ts).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateApiKeyCommand, CreateUsagePlanKeyCommand, DeleteApiKeyCommand, GetApiKeysCommand } from '@aws-sdk/client-api-gateway';
import { AdminError, resolveTarget, usagePlanIdFromOutputs } from '../../bin/admin-target';
import { createKeyTwin, deleteKeyTwins, usagePlanRequests, type ApiGatewaySender } from '../../bin/admin-usage-plan';
import { run } from '../../bin/admin';

const HASH = 'a'.repeat(64);
const twin = { keyId: 'key-1', hash: HASH, namespace: 'acme' };

type Sent = { command: string; input: unknown };
/** A client that records what it is sent and answers from `answers` (by command name). */
function fakeClient(answers: Record<string, ((input: any) => unknown)[]> = {}): ApiGatewaySender & { sent: Sent[] } {
  const sent: Sent[] = [];
  return {
    sent,
    async send(command) {
      const name = command.constructor.name;
      sent.push({ command: name, input: command.input });
      const next = answers[name]?.shift();
      return next ? next(command.input) : {};
    },
  };
}
const fail = (name: string, message = 'boom') => () => {
  throw Object.assign(new Error(message), { name });
};

describe('usagePlanRequests', () => {
  it('creates an enabled API key named by the key id whose value is the hash', () => {
    const c = usagePlanRequests.createApiKey(twin);
    expect(c).toBeInstanceOf(CreateApiKeyCommand);
    expect(c.input).toEqual({
      name: 'key-1',
      value: HASH,
      enabled: true,
      description: expect.stringContaining('key-1'),
      tags: { 'messaging:namespace': 'acme', 'messaging:key-id': 'key-1' },
    });
  });

  it('adds a key to the usage plan, finds keys by name without their values, deletes by id', () => {
    expect(usagePlanRequests.addToPlan('plan1', 'apik1')).toBeInstanceOf(CreateUsagePlanKeyCommand);
    expect(usagePlanRequests.addToPlan('plan1', 'apik1').input).toEqual({ usagePlanId: 'plan1', keyId: 'apik1', keyType: 'API_KEY' });
    expect(usagePlanRequests.findByName('key-1')).toBeInstanceOf(GetApiKeysCommand);
    expect(usagePlanRequests.findByName('key-1', 'p2').input).toEqual({ nameQuery: 'key-1', includeValues: false, limit: 500, position: 'p2' });
    expect(usagePlanRequests.deleteApiKey('apik1')).toBeInstanceOf(DeleteApiKeyCommand);
    expect(usagePlanRequests.deleteApiKey('apik1').input).toEqual({ apiKey: 'apik1' });
  });
});

describe('createKeyTwin', () => {
  it('creates the API key, then adds it to the plan, and returns its id', async () => {
    const client = fakeClient({ CreateApiKeyCommand: [() => ({ id: 'apik1', name: 'key-1' })] });
    await expect(createKeyTwin(client, 'plan1', twin)).resolves.toBe('apik1');
    expect(client.sent).toEqual([
      { command: 'CreateApiKeyCommand', input: usagePlanRequests.createApiKey(twin).input },
      { command: 'CreateUsagePlanKeyCommand', input: { usagePlanId: 'plan1', keyId: 'apik1', keyType: 'API_KEY' } },
    ]);
  });

  it('deletes the API key again when the plan refuses it, and says which plan id to pass', async () => {
    const client = fakeClient({
      CreateApiKeyCommand: [() => ({ id: 'apik1' })],
      CreateUsagePlanKeyCommand: [fail('NotFoundException', 'Invalid Usage Plan ID specified')],
    });
    const e = await createKeyTwin(client, 'wrong', twin).catch((x) => x);
    expect(e).toBeInstanceOf(AdminError);
    expect(e.message).toMatch(/usage plan wrong not found/);
    expect(e.message).toMatch(/--usage-plan ID or --outputs cdk-outputs.json/);
    expect(client.sent.map((s) => s.command)).toEqual(['CreateApiKeyCommand', 'CreateUsagePlanKeyCommand', 'DeleteApiKeyCommand']);
    expect(client.sent[2].input).toEqual({ apiKey: 'apik1' });
  });

  it('names the API key left behind when even the clean-up fails', async () => {
    const client = fakeClient({
      CreateApiKeyCommand: [() => ({ id: 'apik1' })],
      CreateUsagePlanKeyCommand: [fail('TooManyRequestsException')],
      DeleteApiKeyCommand: [fail('TooManyRequestsException')],
    });
    const e = await createKeyTwin(client, 'plan1', twin).catch((x) => x);
    expect(e.message).toMatch(/run the command again/);
    expect(e.message).toMatch(/aws apigateway delete-api-key --api-key apik1/);
  });

  it('says which permissions are missing when AWS refuses', async () => {
    const client = fakeClient({ CreateApiKeyCommand: [fail('AccessDeniedException')] });
    const e = await createKeyTwin(client, 'plan1', twin).catch((x) => x);
    expect(e).toBeInstanceOf(AdminError);
    expect(e.message).toMatch(/could not create the API Gateway key of key-1: AWS refused it .*apigateway:POST/);
    expect(client.sent).toHaveLength(1);
  });
});

describe('deleteKeyTwins', () => {
  it('deletes every API key named exactly by the key id, over all pages', async () => {
    const client = fakeClient({
      GetApiKeysCommand: [
        () => ({ items: [{ id: 'a1', name: 'key-1' }, { id: 'a2', name: 'key-10' }], position: 'p2' }),
        () => ({ items: [{ id: 'a3', name: 'key-1' }] }),
      ],
    });
    await expect(deleteKeyTwins(client, 'key-1')).resolves.toEqual(['a1', 'a3']);
    expect(client.sent).toEqual([
      { command: 'GetApiKeysCommand', input: { nameQuery: 'key-1', includeValues: false, limit: 500, position: undefined } },
      { command: 'GetApiKeysCommand', input: { nameQuery: 'key-1', includeValues: false, limit: 500, position: 'p2' } },
      { command: 'DeleteApiKeyCommand', input: { apiKey: 'a1' } },
      { command: 'DeleteApiKeyCommand', input: { apiKey: 'a3' } },
    ]);
  });

  it('finds nothing to delete for a key that never had a twin', async () => {
    const client = fakeClient({ GetApiKeysCommand: [() => ({ items: [] })] });
    await expect(deleteKeyTwins(client, 'key-1')).resolves.toEqual([]);
  });

  it('says the key is revoked already and how to finish when a delete fails', async () => {
    const client = fakeClient({ GetApiKeysCommand: [() => ({ items: [{ id: 'a1', name: 'key-1' }] })], DeleteApiKeyCommand: [fail('TooManyRequestsException')] });
    const e = await deleteKeyTwins(client, 'key-1').catch((x) => x);
    expect(e.message).toMatch(/the key is revoked already, run key revoke again or aws apigateway delete-api-key --api-key a1/);
  });
});

describe('the usage plan id of a deployed stack', () => {
  const outputsFile = (json: unknown) => {
    const file = join(mkdtempSync(join(tmpdir(), 'admin-outputs-')), 'cdk-outputs.json');
    writeFileSync(file, JSON.stringify(json));
    return file;
  };
  const noLocal = () => undefined;

  it('comes from the UsagePlanId output of the outputs file', () => {
    expect(usagePlanIdFromOutputs({ MessagingService: { MetaTableName: 'm', UsagePlanId: 'plan1' } })).toBe('plan1');
    expect(usagePlanIdFromOutputs({ MessagingService: { MetaTableName: 'm' } })).toBeUndefined();
    const file = outputsFile({ MessagingService: { MetaTableName: 'm', UsagePlanId: 'plan1', SqsQueuePrefix: 'MessagingService_q_', SqsQueueUrlBase: 'https://sqs.eu-west-1.amazonaws.com/123/' } });
    expect(resolveTarget({ outputs: file, region: 'eu-west-1' }, {}, noLocal)).toEqual({
      kind: 'aws',
      metaTable: 'm',
      region: 'eu-west-1',
      usagePlanId: 'plan1',
      describe: 'AWS table m in eu-west-1, usage plan plan1',
      // Where the SQS queues of its service queues are (redrive, sqs-queues).
      sqs: { prefix: 'MessagingService_q_', urlBase: 'https://sqs.eu-west-1.amazonaws.com/123/' },
    });
  });

  it('comes from --usage-plan before the outputs file, or from MSG_USAGE_PLAN_ID', () => {
    const file = outputsFile({ MessagingService: { MetaTableName: 'm', UsagePlanId: 'plan1' } });
    expect(resolveTarget({ outputs: file, 'usage-plan': 'plan2' }, {}, noLocal)).toMatchObject({ usagePlanId: 'plan2' });
    expect(resolveTarget({ 'meta-table': 'm' }, { MSG_USAGE_PLAN_ID: 'plan3' }, noLocal)).toMatchObject({ usagePlanId: 'plan3' });
    expect(resolveTarget({ 'meta-table': 'm' }, {}, noLocal)).not.toHaveProperty('usagePlanId');
  });

  it('is refused for a local target, where there is no API Gateway', () => {
    for (const flags of [{ endpoint: 'http://127.0.0.1:8000' }, {}]) {
      let err: unknown;
      try {
        resolveTarget({ ...flags, 'usage-plan': 'plan1' }, {}, () => ({ pid: 1, port: 8080, dynamodbEndpoint: 'http://127.0.0.1:9', tables: {} }), () => true);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(AdminError);
      expect((err as AdminError).exitCode).toBe(2);
      expect((err as AdminError).message).toMatch(/--usage-plan applies to a deployed stack only/);
    }
  });
});

describe('admin key create against a deployed stack without a usage plan id', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  it('refuses before storing anything and says where the id comes from', async () => {
    const err: string[] = [];
    const client = fakeClient();
    const code = await run(['key', 'create', 'acme', '--scopes', 'publish', '--meta-table', 'Meta', '--region', 'eu-west-1'], {
      out: () => undefined,
      err: (l) => err.push(l),
      env: {},
      apiGateway: client,
    });
    expect(code).toBe(1);
    expect(err.at(-1)).toMatch(/needs the stack's usage plan .*401 INVALID_API_KEY.*--outputs cdk-outputs.json.*--usage-plan ID/);
    expect(err.at(-1)).toMatch(/describe-stacks --stack-name MessagingService/);
    expect(client.sent).toEqual([]);
  });
});
