/**
 * The authorizer's answer to API Gateway: an Allow policy on the whole stage (handlers check each
 * route's scope), the key's namespace, scopes and id as context, and the key's SHA-256 hash as
 * the usage identifier key that the usage plan meters (API key source AUTHORIZER). Storage is
 * replaced by in-memory answers; the DynamoDB side is covered by the integration tests.
 */
import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { hashApiKey } from '../../lambda/core/rules/auth';
import { findActiveKey, type ApiKeyRecord } from '../../lambda/namespaces/storage/api-keys';
import { getNamespace } from '../../lambda/namespaces/storage/namespaces';
import { handler, UNAUTHORIZED } from '../../lambda/handlers/authorizer';
import { resetConfig } from '../../lambda/core/config';

jest.mock('../../lambda/namespaces/storage/api-keys', () => ({ findActiveKey: jest.fn() }));
jest.mock('../../lambda/namespaces/storage/namespaces', () => ({ getNamespace: jest.fn() }));
const findKey = findActiveKey as jest.MockedFunction<typeof findActiveKey>;
const findNamespace = getNamespace as jest.MockedFunction<typeof getNamespace>;

const KEY = 'msg_acme_0123456789abcdefghijklmnopqrstuvwxyz';
const rec: ApiKeyRecord = { key_id: 'k-1', namespace: 'acme', scopes: ['publish', 'consume'], created_at: 1, hash: hashApiKey(KEY) };
const METHOD_ARN = 'arn:aws:execute-api:eu-west-1:123456789012:abc123/api/POST/v1/topics/orders/messages';

const event = (headers: Record<string, string>): APIGatewayRequestAuthorizerEvent =>
  ({ type: 'REQUEST', methodArn: METHOD_ARN, headers } as unknown as APIGatewayRequestAuthorizerEvent);

describe('authorizer', () => {
  beforeEach(() => {
    findKey.mockReset();
    findNamespace.mockReset();
    delete process.env.MSG_BASE_DOMAIN;
    resetConfig();
  });

  it('allows the whole stage with the key as context and its hash as usage identifier key', async () => {
    findKey.mockResolvedValue(rec);
    const answer = await handler(event({ Authorization: `Bearer ${KEY}`, Host: 'abc123.execute-api.eu-west-1.amazonaws.com' }));
    expect(findKey).toHaveBeenCalledWith(KEY);
    expect(answer).toEqual({
      principalId: 'k-1',
      policyDocument: {
        Version: '2012-10-17',
        Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: 'arn:aws:execute-api:eu-west-1:123456789012:abc123/api/*' }],
      },
      context: { namespace: 'acme', scopes: 'publish,consume', keyId: 'k-1' },
      usageIdentifierKey: rec.hash,
    });
  });

  it('names a usage identifier key that API Gateway accepts as an API key value: 64 hex characters, never the key', async () => {
    findKey.mockResolvedValue(rec);
    const { usageIdentifierKey } = await handler(event({ authorization: `Bearer ${KEY}` }));
    expect(usageIdentifierKey).toMatch(/^[0-9a-f]{64}$/);
    expect(usageIdentifierKey!.length).toBeGreaterThanOrEqual(20);
    expect(usageIdentifierKey!.length).toBeLessThanOrEqual(128);
    expect(usageIdentifierKey).not.toContain(KEY);
  });

  it('marks a Host naming a namespace that does not exist, still metering the key', async () => {
    process.env.MSG_BASE_DOMAIN = 'msg.example.com';
    resetConfig();
    findKey.mockResolvedValue(rec);
    findNamespace.mockResolvedValue(undefined);
    const answer = await handler(event({ authorization: `Bearer ${KEY}`, host: 'other.msg.example.com' }));
    expect(findNamespace).toHaveBeenCalledWith('other');
    expect(answer.context).toEqual({ namespace: 'acme', scopes: 'publish,consume', keyId: 'k-1', hostError: 'NAMESPACE_NOT_FOUND' });
    expect(answer.usageIdentifierKey).toBe(rec.hash);
  });

  it.each([
    ['no Authorization header', {}],
    ['a scheme other than Bearer', { authorization: `Basic ${KEY}` }],
  ])('refuses %s without a lookup', async (_name, headers) => {
    await expect(handler(event(headers))).rejects.toThrow(UNAUTHORIZED);
    expect(findKey).not.toHaveBeenCalled();
  });

  it('refuses an unknown or revoked key', async () => {
    findKey.mockResolvedValue(undefined);
    await expect(handler(event({ authorization: `Bearer ${KEY}` }))).rejects.toThrow(UNAUTHORIZED);
  });

  it('refuses a key on the host of another namespace that exists', async () => {
    process.env.MSG_BASE_DOMAIN = 'msg.example.com';
    resetConfig();
    findKey.mockResolvedValue(rec);
    findNamespace.mockResolvedValue({ name: 'other' } as Awaited<ReturnType<typeof getNamespace>>);
    await expect(handler(event({ authorization: `Bearer ${KEY}`, host: 'other.msg.example.com' }))).rejects.toThrow(UNAUTHORIZED);
  });
});
