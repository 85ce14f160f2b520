/**
 * What the event catalog (docs/catalog.md) adds to the stack: its own function behind
 * `/event-types`, `/event-types/{event_type+}` and `/asyncapi.json`, authorized like every route,
 * with least privilege: the meta table only (event types, their count and the catalog version),
 * no index, no SQS, no KMS, no other table. The publish function needs nothing new to enforce
 * schemas: it reads the catalog from the meta table it already reads.
 */
import { TABLE_ACCESS, DYNAMODB_ACTIONS, SERVICE_QUEUE_ACCESS, SECRETS_KEY_ACCESS, INDEX_QUERIES } from '../../lib/table-access';
import { routesOf } from '../../lambda/core/rules/routes';
import { actions, defaultStack } from './stack';

const { stack, template, logicalId, statementsOf } = defaultStack();
const resources = template.toJSON().Resources as Record<string, { Type: string; Properties: any }>;

describe('event catalog in the stack', () => {
  it('has a function of its own serving exactly the catalog routes', () => {
    expect(stack.functions.http.has('catalog')).toBe(true);
    expect(routesOf('catalog').map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /event-types',
      'GET /event-types',
      'GET /event-types/{event_type+}',
      'PATCH /event-types/{event_type+}',
      'DELETE /event-types/{event_type+}',
      'GET /asyncapi.json',
    ]);
  });

  it.each([
    ['/event-types', ['POST', 'GET']],
    ['/event-types/{event_type+}', ['GET', 'PATCH', 'DELETE']],
    ['/asyncapi.json', ['GET']],
  ])('routes %s (%j) to the catalog function through the REQUEST authorizer', (path, methods) => {
    const part = path.split('/').pop() as string;
    const resourceIds = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::ApiGateway::Resource' && r.Properties.PathPart === part).map(([id]) => id);
    expect(resourceIds).toHaveLength(1);
    const fnId = logicalId(stack.functions.http.get('catalog')!);
    for (const m of methods) {
      const method = Object.values(resources).find((r) => r.Type === 'AWS::ApiGateway::Method' && r.Properties.HttpMethod === m && r.Properties.ResourceId?.Ref === resourceIds[0]);
      expect(method).toBeDefined();
      expect(method!.Properties.AuthorizationType).toBe('CUSTOM');
      expect(JSON.stringify(method!.Properties.Integration.Uri)).toContain(fnId);
    }
  });

  it('gets the meta table only, with exactly the actions its code calls, and no SQS, KMS or index', () => {
    expect(TABLE_ACCESS.catalog).toEqual({ meta: 'readWrite' });
    expect(DYNAMODB_ACTIONS.catalog).toEqual(['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem']);
    expect(SERVICE_QUEUE_ACCESS.catalog).toEqual([]);
    expect(SECRETS_KEY_ACCESS.catalog).toBeUndefined();
    expect(INDEX_QUERIES.catalog).toBeUndefined();
    const statements = statementsOf('catalog');
    const granted = new Set(statements.flatMap(actions));
    for (const a of granted) expect(a.startsWith('dynamodb:') || a.startsWith('logs:') || a.startsWith('xray:')).toBe(true);
    expect([...granted].filter((a) => a.startsWith('dynamodb:')).sort()).toEqual([...DYNAMODB_ACTIONS.catalog].sort());
    const metaId = logicalId(stack.tables.byId.meta);
    const dynamoResources = JSON.stringify(statements.filter((s) => actions(s).some((a) => a.startsWith('dynamodb:'))).map((s) => s.Resource));
    expect(dynamoResources).toContain(metaId);
    for (const [id, table] of Object.entries(stack.tables.byId)) if (id !== 'meta') expect(dynamoResources).not.toContain(logicalId(table));
    expect(dynamoResources).not.toContain('/index/');
  });
});
