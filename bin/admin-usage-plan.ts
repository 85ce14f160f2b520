/**
 * Usage-plan twins of API keys, for the admin CLI against a deployed stack (docs/rate-limits.md).
 * The API's key source is AUTHORIZER: the authorizer names the key's SHA-256 hash as usage
 * identifier, and API Gateway meters the request against the API Gateway API key with that value
 * in the stage's usage plan, or answers 401 INVALID_API_KEY when there is none. So every key gets
 * a twin: name = key id, value = hash, enabled, in the plan; revoking the key deletes the twin.
 * The local runtime has no API Gateway and no twins.
 *
 * Requests are built by {@link usagePlanRequests} (pure, asserted by test/unit/admin-usage-plan.test.ts)
 * and sent through an injected client, so tests need no network.
 */
import {
  APIGatewayClient, CreateApiKeyCommand, CreateUsagePlanKeyCommand, DeleteApiKeyCommand, GetApiKeysCommand,
  type ApiKey,
} from '@aws-sdk/client-api-gateway';
import { AdminError } from './admin-target';

/** What the functions below need of an APIGatewayClient. */
export interface ApiGatewaySender {
  send(command: CreateApiKeyCommand | CreateUsagePlanKeyCommand | GetApiKeysCommand | DeleteApiKeyCommand): Promise<unknown>;
}

export interface KeyTwin {
  /** The service's key id: the twin's name. */
  keyId: string;
  /** SHA-256 hash of the key (64 hex characters): the twin's value. Never the key. */
  hash: string;
  namespace: string;
}

export const usagePlanRequests = {
  createApiKey: (k: KeyTwin) =>
    new CreateApiKeyCommand({
      name: k.keyId,
      value: k.hash,
      enabled: true,
      description: `Usage-plan twin of messaging key ${k.keyId} (namespace ${k.namespace}); value = the key's SHA-256 hash`,
      tags: { 'messaging:namespace': k.namespace, 'messaging:key-id': k.keyId },
    }),
  addToPlan: (usagePlanId: string, apiKeyId: string) => new CreateUsagePlanKeyCommand({ usagePlanId, keyId: apiKeyId, keyType: 'API_KEY' }),
  /** `nameQuery` matches names by prefix; callers keep exact matches. */
  findByName: (keyId: string, position?: string) => new GetApiKeysCommand({ nameQuery: keyId, includeValues: false, limit: 500, position }),
  deleteApiKey: (apiKeyId: string) => new DeleteApiKeyCommand({ apiKey: apiKeyId }),
};

export const apiGatewayClient = (region?: string): APIGatewayClient => new APIGatewayClient(region ? { region } : {});

const describe = (e: unknown) => `${(e as Error).name ?? 'Error'}: ${(e as Error).message ?? String(e)}`;

/** Says what to do about an API Gateway failure while working on usage plan `usagePlanId`. */
function explainApiGateway(e: unknown, action: string, usagePlanId?: string): string {
  const name = (e as Error).name;
  if (name === 'NotFoundException' && usagePlanId) {
    return `${action}: usage plan ${usagePlanId} not found in ${process.env.AWS_REGION ?? 'this region'} (${describe(e)}); pass the stack's UsagePlanId output with --usage-plan ID or --outputs cdk-outputs.json, and the stack's region with --region`;
  }
  if (name === 'AccessDeniedException' || name === 'UnauthorizedException' || name === 'UnrecognizedClientException') {
    return `${action}: AWS refused it (${describe(e)}); your credentials need apigateway:POST on /apikeys and /usageplans/*/keys, apigateway:GET on /apikeys and apigateway:DELETE on /apikeys/*`;
  }
  if (name === 'TooManyRequestsException' || name === 'LimitExceededException') {
    return `${action}: API Gateway throttled or limited the request (${describe(e)}); wait a moment and run the command again, or raise the account's API key quota`;
  }
  return `${action}: ${describe(e)}`;
}

/**
 * Creates the twin of a key and adds it to the usage plan; returns the API Gateway key id. When
 * adding to the plan fails, the twin is deleted again, so nothing is left half done.
 */
export async function createKeyTwin(client: ApiGatewaySender, usagePlanId: string, k: KeyTwin): Promise<string> {
  let created: ApiKey;
  try {
    created = (await client.send(usagePlanRequests.createApiKey(k))) as ApiKey;
  } catch (e) {
    throw new AdminError(explainApiGateway(e, `could not create the API Gateway key of ${k.keyId}`, usagePlanId));
  }
  if (!created.id) throw new AdminError(`API Gateway created the key of ${k.keyId} without an id; delete it in the console (API keys, name ${k.keyId}) and run the command again`);
  try {
    await client.send(usagePlanRequests.addToPlan(usagePlanId, created.id));
  } catch (e) {
    let cleanup = '';
    try {
      await client.send(usagePlanRequests.deleteApiKey(created.id));
    } catch (d) {
      cleanup = `; also delete the API Gateway key ${created.id} it left: aws apigateway delete-api-key --api-key ${created.id} (${describe(d)})`;
    }
    throw new AdminError(`${explainApiGateway(e, `could not add the API Gateway key of ${k.keyId} to usage plan ${usagePlanId}`, usagePlanId)}${cleanup}`);
  }
  return created.id;
}

/** API Gateway keys named exactly `keyId` (normally one). */
async function findKeyTwins(client: ApiGatewaySender, keyId: string): Promise<string[]> {
  const ids: string[] = [];
  let position: string | undefined;
  do {
    const page = (await client.send(usagePlanRequests.findByName(keyId, position))) as { items?: ApiKey[]; position?: string };
    for (const item of page.items ?? []) if (item.name === keyId && item.id) ids.push(item.id);
    position = page.position;
  } while (position);
  return ids;
}

/** Deletes the twins of `keyId` (deleting an API key also removes it from its usage plans); returns their ids. */
export async function deleteKeyTwins(client: ApiGatewaySender, keyId: string): Promise<string[]> {
  let ids: string[];
  try {
    ids = await findKeyTwins(client, keyId);
  } catch (e) {
    throw new AdminError(`${explainApiGateway(e, `could not look up the API Gateway key of ${keyId}`)}; the key is revoked already (401 within the authorizer cache TTL), run key revoke again to delete its API Gateway key`);
  }
  for (const id of ids) {
    try {
      await client.send(usagePlanRequests.deleteApiKey(id));
    } catch (e) {
      throw new AdminError(`${explainApiGateway(e, `could not delete the API Gateway key ${id} of ${keyId}`)}; the key is revoked already, run key revoke again or aws apigateway delete-api-key --api-key ${id}`);
    }
  }
  return ids;
}
